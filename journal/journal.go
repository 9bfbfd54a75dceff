package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rubicon-go/rubicon"
)

// State is where an operation stands in the state machine.
type State string

// The states of an operation.
const (
	// Pending: recorded, not yet sent; may be claimed by a worker.
	Pending State = "pending"
	// FailedSafe: failed before the boundary; nothing was sent.
	FailedSafe State = "failed_safe"
	// Sending: committed as about to be sent; the request may be on the wire.
	Sending State = "sending"
	// Applied: the side effect took place.
	Applied State = "applied"
	// NotApplied: the side effect provably did not take place.
	NotApplied State = "not_applied"
	// Ambiguous: the side effect may or may not have taken place. Only a
	// recorded resolution moves it on.
	Ambiguous State = "ambiguous"
)

// States lists every state, in the order of the state machine.
var States = []State{Pending, FailedSafe, Sending, Applied, NotApplied, Ambiguous}

// legal lists, for each state, the states it may move to.
var legal = map[State][]State{
	Pending:    {Sending, FailedSafe},
	FailedSafe: {Pending},
	Sending:    {Applied, NotApplied, FailedSafe, Ambiguous},
	Ambiguous:  {Applied, NotApplied},
	NotApplied: {Pending},
	Applied:    nil,
}

// CanTransition reports whether the state machine allows from → to.
func CanTransition(from, to State) bool {
	return slices.Contains(legal[from], to)
}

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	_, ok := legal[s]
	return ok
}

// Evidence is free-form, JSON-encodable detail about an operation: provider
// request ids, bytes written, timestamps. Recording evidence merges it into
// what the operation has: a key given again replaces its old value.
type Evidence map[string]any

// merge returns e with other's keys set over it.
func (e Evidence) merge(other Evidence) Evidence {
	if len(other) == 0 {
		return e
	}
	out := make(Evidence, len(e)+len(other))
	for k, v := range e {
		out[k] = v
	}
	for k, v := range other {
		out[k] = v
	}
	return out
}

// Operation is one logical side effect.
type Operation struct {
	// Key is unique per logical side effect; the same key is the same
	// effect.
	Key string
	// Kind groups operations that workers claim together, such as
	// "transcribe".
	Kind string
	// Subject says what the operation acts on, such as a batch and an item.
	Subject string
	State   State
	// Attempts counts the times the operation was sent.
	Attempts int
	// LastPhase and LastError describe the last failure, if any.
	LastPhase rubicon.Phase
	LastError string
	Evidence  Evidence
	// Worker holds the lease, or held it last.
	Worker string
	// Instance identifies the [Journal] (a random id that [New] makes)
	// through which Worker holds or last held the lease: two processes, or
	// two journals, given the same worker name never act on each other's
	// leases.
	Instance string
	// LeaseExpires is when the worker's lease runs out, by the store's
	// clock; zero when no lease is held. An ambiguous operation that its
	// sender reported keeps the lease it was sent under: until it runs
	// out, the operation cannot be resolved as not applied.
	LeaseExpires time.Time
	// Deadline is set only in the operation that a sending commit (Send,
	// SendTx, Start) returns, in the process that made it: the moment, on
	// this process's monotonic clock, by which the request must be over.
	// It is counted from just before the commit, by the lease the commit
	// took (less 1 % for the clocks' rates), so that it comes before the
	// store's clock lets anyone else take the operation. Send the request
	// under [Operation.Fence].
	Deadline time.Time
	Created  time.Time
	Updated  time.Time
	// Resolution is set once a person or a reconciliation settled an
	// ambiguous outcome.
	Resolution *Resolution
	// Guard and Replay are what the operation was recorded with
	// ([NewOperation]); empty if none.
	Guard, Replay string
}

// Entry is one line of the audit log: a transition and why it was made.
type Entry struct {
	ID       int64
	Key      string
	From, To State // From is empty for the entry that creates the operation.
	At       time.Time
	// Actor is who made the transition: a worker, a person, "recovery".
	Actor    string
	Reason   string
	Evidence Evidence
}

// Fence returns parent bounded by op's Deadline: a request sent under it
// through rubicon's transport is never started once the lease it was
// committed under has run out, so that a process that wakes up after its
// lease is gone never starts writing. For an operation without a
// Deadline (not returned by a sending commit of this process) the context
// is already canceled, with a cause that says so.
func (op Operation) Fence(parent context.Context) (context.Context, context.CancelFunc) {
	if op.Deadline.IsZero() {
		ctx, cancel := context.WithCancelCause(parent)
		cancel(fmt.Errorf("operation %q has no sending deadline in this process: send only what Send, SendTx or Start returned", op.Key))
		return ctx, func() { cancel(nil) }
	}
	return context.WithDeadlineCause(parent, op.Deadline, &FenceError{Key: op.Key, Deadline: op.Deadline})
}

// FenceError is the cause of a [Operation.Fence] context whose deadline
// passed: the request's lease ran out, and what was not written by then
// must never be.
type FenceError struct {
	Key      string
	Deadline time.Time
}

// Error names the operation.
func (e *FenceError) Error() string {
	return fmt.Sprintf("the lease that operation %q was sent under ran out: nothing more of its request may be sent", e.Key)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true, as for any
// deadline.
func (e *FenceError) Is(target error) bool { return target == context.DeadlineExceeded }

// Resolution settles an ambiguous operation.
type Resolution struct {
	// To is Applied or NotApplied.
	To State
	// By names who decided: a person, or the reconciliation that asked the
	// provider. Required.
	By string
	// Note says why. Required.
	Note string
	// At is when; set by the journal.
	At time.Time
	// Evidence backs the decision: a transcript id, a provider's record.
	Evidence Evidence
}

// Errors the journal returns. Use errors.Is; the concrete errors say which
// operation and which states were involved.
var (
	ErrNotFound          = errors.New("no such operation in the journal")
	ErrIllegalTransition = errors.New("illegal transition of a journal operation")
	ErrLeaseLost         = errors.New("the lease on the journal operation is not held")
	ErrKeyConflict       = errors.New("the key is already used for another operation in the journal")
	// ErrGuarded is matched by the *GuardError that refuses an operation
	// whose guard an open operation holds.
	ErrGuarded = errors.New("an open operation of the journal holds the guard")
	// ErrReplayed is matched by the *ReplayError that Start returns
	// instead of starting an operation already applied.
	ErrReplayed = errors.New("the same operation was applied already")
)

// GuardError refuses to record an operation: another one with the same
// guard is pending, sending or ambiguous ([NewOperation.Guard]).
type GuardError struct {
	Guard string
	// Open is the operation that holds the guard. It may be empty when
	// that operation moved on between the refusal and the look-up.
	Open Operation
}

// Error names the guard and who holds it.
func (e *GuardError) Error() string {
	return fmt.Sprintf("operation %q (%s) of the journal holds the guard %q", e.Open.Key, e.Open.State, e.Guard)
}

// Is makes errors.Is(err, ErrGuarded) true.
func (e *GuardError) Is(target error) bool { return target == ErrGuarded }

// ReplayError is what Start returns, recording nothing, when an operation
// with the same replay key was applied within the window asked for
// ([NewOperation.Replay]).
type ReplayError struct {
	Replay string
	// Applied is the operation applied, with its evidence.
	Applied Operation
}

// Error names the operation applied.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("operation %q of the journal, with the same replay key, was applied at %s", e.Applied.Key, e.Applied.Updated.Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrReplayed) true.
func (e *ReplayError) Is(target error) bool { return target == ErrReplayed }

// ErrCorrupt is matched by the errors that report an operation a store
// holds but cannot read back; see [CorruptError].
var ErrCorrupt = errors.New("an operation stored in the journal cannot be read")

// CorruptError reports an operation that a store holds but cannot read back
// in full: its stored evidence or resolution was damaged outside the
// journal. Listing reports such operations this way without hiding the
// others.
type CorruptError struct {
	Key string
	// Part names what cannot be read: "evidence", "resolution".
	Part string
	Err  error
}

// Error names the operation, the part and the cause.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal operation %q: its stored %s cannot be read (%v): repair it in the store", e.Key, e.Part, e.Err)
}

// Unwrap returns the cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Corrupt returns the *CorruptError values that err holds, alone or joined
// (errors.Join), and whether err holds nothing else: then the operations
// returned with it are every readable one.
func Corrupt(err error) ([]*CorruptError, bool) {
	if err == nil {
		return nil, true
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []*CorruptError
	for _, e := range errs {
		var ce *CorruptError
		if !errors.As(e, &ce) {
			return out, false
		}
		out = append(out, ce)
	}
	return out, true
}

// NotFoundError reports an unknown operation key.
type NotFoundError struct{ Key string }

// Error names the key.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no operation with key %q in the journal", e.Key)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// TransitionError reports a transition that the state machine, or the
// operation's situation, does not allow.
type TransitionError struct {
	Key      string
	From, To State
	// Why explains the refusal and, where there is one, the way forward.
	Why string
	// Until, when set, is when the transition becomes possible, by the
	// store's clock: a resolution as not applied waits for the lease of
	// the request's sender to run out.
	Until time.Time
}

// Error names the operation, the states and why.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("operation %q cannot go from %s to %s: %s", e.Key, e.From, e.To, e.Why)
}

// Is makes errors.Is(err, ErrIllegalTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrIllegalTransition }

// LeaseError reports a worker acting on an operation it does not hold.
type LeaseError struct {
	Key, Worker string
	// Holder is the worker that holds or held the lease, if any.
	Holder string
	// Elsewhere is set when Holder is Worker's own name but the lease was
	// taken through another journal: another process given the same name.
	Elsewhere bool
	// Expired is when the worker's lease ran out, if it did.
	Expired time.Time
}

// Error names the worker, the operation and the holder or expiry.
func (e *LeaseError) Error() string {
	switch {
	case e.Holder != "" && e.Holder != e.Worker:
		return fmt.Sprintf("worker %q does not hold operation %q: %q does", e.Worker, e.Key, e.Holder)
	case e.Elsewhere:
		return fmt.Sprintf("worker %q does not hold operation %q: another process (or journal) under the same name does; give each process a name of its own (journal.ProcessWorker)", e.Worker, e.Key)
	case !e.Expired.IsZero():
		return fmt.Sprintf("worker %q's lease on operation %q ran out at %s", e.Worker, e.Key, e.Expired.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("worker %q holds no lease on operation %q: claim it first", e.Worker, e.Key)
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseError) Is(target error) bool { return target == ErrLeaseLost }

// Filter selects operations. Empty fields select everything.
type Filter struct {
	Kind          string
	SubjectPrefix string
	States        []State
	// Keys selects the operations with these keys, however many: a
	// product that keeps its operations' keys beside its own rows reads
	// their states in one call. A key without an operation selects nothing.
	Keys []string
	// Limit caps the number returned; 0 means no cap.
	Limit int
}

// Tx is what the journal needs from storage, inside one transaction. An
// implementation must make the transaction serializable with respect to the
// operations it reads for update: a row returned by LockOperation, or by a
// claim, does not change under the transaction until it ends.
type Tx interface {
	// CreateOperation stores op unless its key exists or, when op.Guard is
	// set, an operation with the same guard is pending, sending or
	// ambiguous; it returns the stored operation with op's key, or else
	// the one that holds the guard, and whether this call created op. The
	// guard must hold across every transaction and process that shares
	// the store: two that create operations with one guard at once never
	// both succeed.
	CreateOperation(ctx context.Context, op Operation) (Operation, bool, error)
	// LastApplied returns the operation with the replay key that was
	// applied last, if it was applied (last updated) at or after since.
	LastApplied(ctx context.Context, replay string, since time.Time) (Operation, bool, error)
	// LockOperation returns the operation with key, locked for update;
	// a *NotFoundError if there is none.
	LockOperation(ctx context.Context, key string) (Operation, error)
	// UpdateOperation stores every field of op but Key, Kind and Created.
	UpdateOperation(ctx context.Context, op Operation) error
	// AppendEntry adds e to the audit log.
	AppendEntry(ctx context.Context, e Entry) error
	// ClaimPending gives worker, through the journal instance, a lease
	// until until on at most n pending operations of kind whose lease is
	// free at now, oldest first, and returns them. Like Operations, it
	// returns those it can read and a *CorruptError for each it cannot.
	ClaimPending(ctx context.Context, kind, worker, instance string, n int, now, until time.Time) ([]Operation, error)
	// RenewLeases moves the lease of the operations among keys that
	// worker holds through instance, that are pending or sending, and
	// whose lease has not run out at now, to until, unless it already
	// runs past until: a renewal never shortens a lease. It returns the
	// keys renewed.
	RenewLeases(ctx context.Context, worker, instance string, keys []string, now, until time.Time) ([]string, error)
	// ExpiredSending returns, locked, at most limit operations in sending
	// whose lease ran out before now. Like Operations, it returns those it
	// can read and a *CorruptError for each it cannot.
	ExpiredSending(ctx context.Context, now time.Time, limit int) ([]Operation, error)
	// Operations returns the operations that f selects, oldest first. An
	// operation it cannot read back (damaged evidence, say) does not hide
	// the others: it returns every readable one, and an error joining
	// (errors.Join) one *CorruptError per unreadable one. Evidence reads
	// back exactly: numbers as json.Number, never rounded through float64.
	Operations(ctx context.Context, f Filter) ([]Operation, error)
	// Entries returns key's audit log, oldest first.
	Entries(ctx context.Context, key string) ([]Entry, error)
}

// Mover is a capability a Tx may have: a transition in one step, without
// reading the operation first. The journal uses it for the common
// transitions (sending, and the outcome reported by the worker that sent)
// and, whenever it returns false, falls back to reading, checking and
// writing, which every Tx supports.
type Mover interface {
	// Move changes the operation m.Key as m says if, and only if, the
	// operation is in state m.From, its worker is m.Worker through
	// m.Instance, and, when m.LeaseAfter is set, its lease runs past
	// m.LeaseAfter, and, when m.Attempt is set, its attempt count is
	// m.Attempt; it returns the operation as stored and true. Otherwise, or when it cannot make the
	// change in one step (evidence it cannot merge there, say), it changes
	// nothing and returns false. It appends nothing to the audit log.
	Move(ctx context.Context, m Move) (Operation, bool, error)
}

// Move is a transition made in one step, for [Mover].
type Move struct {
	Key, Worker, Instance string
	From, To              State
	// LeaseAfter, if set, requires the worker's lease to run past it.
	LeaseAfter time.Time
	// Attempt, if set, requires the operation's Attempts to be it.
	Attempt int
	// AddAttempt counts one more attempt.
	AddAttempt bool
	// Lease is the lease after the move; the zero time clears it.
	Lease time.Time
	// Failure, when set, replaces LastPhase and LastError.
	Failure   bool
	LastPhase rubicon.Phase
	LastError string
	// Evidence is merged into the operation's: each key replaces the
	// stored one.
	Evidence Evidence
	Updated  time.Time
}

// Clock is a capability a Tx may have: the store's own clock, which
// judges every lease, so that processes whose clocks disagree still agree
// on who holds what. A store shared by several hosts reads the time where
// the data is (PostgreSQL's clock_timestamp(), say); the journal reads it
// once per decision, inside the transaction that acts on it. Without it,
// the journal uses its own clock (Options.Now), which then must agree
// across every process sharing the store.
type Clock interface {
	// Now returns the store's current time.
	Now(ctx context.Context) (time.Time, error)
}

// Store runs functions in transactions.
type Store interface {
	// Update runs fn in a read-write transaction, committed if fn returns
	// nil and rolled back otherwise.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
}
