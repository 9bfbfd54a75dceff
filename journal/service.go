package journal

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/internal/input"
	"github.com/rubicon-go/rubicon/retry"
)

// Options configure a [Journal].
type Options struct {
	// Lease is how long a claim holds an operation before another worker
	// may take it over. Workers renew it while they work ([KeepLeases]).
	// Default 30 s.
	Lease time.Duration
	// SendLease is how long a sending commit holds its operation: its
	// request must be over by then ([Operation.Deadline]), and only after
	// it may recovery make the operation ambiguous, or anyone resolve it as
	// not applied. Default Lease.
	SendLease time.Duration
	// Now is the journal's clock for a store without one of its own
	// ([Clock]); a store with one judges leases and times records by its
	// own, whatever Now says. Default time.Now.
	Now func() time.Time
}

// Journal is the operation journal. It is safe for concurrent use, by as
// many goroutines and processes as the Store allows.
//
// Each Journal has an instance id of its own, random, stored with every
// lease it takes: a journal acts only on leases taken through it, so that
// two processes given the same worker name never take each other's
// operations.
type Journal struct {
	store     Store
	lease     time.Duration
	sendLease time.Duration
	now       func() time.Time
	instance  string
}

// New returns a journal over store.
func New(store Store, opts Options) *Journal {
	j := &Journal{store: store, lease: opts.Lease, sendLease: opts.SendLease, now: opts.Now,
		instance: strings.ToLower(rand.Text()[:16])}
	if j.lease <= 0 {
		j.lease = 30 * time.Second
	}
	if j.sendLease <= 0 {
		j.sendLease = j.lease
	}
	if j.now == nil {
		j.now = time.Now
	}
	return j
}

// Lease returns the lease a claim takes.
func (j *Journal) Lease() time.Duration { return j.lease }

// SendLease returns the lease a sending commit takes: the longest a
// request may take.
func (j *Journal) SendLease() time.Duration { return j.sendLease }

// clock returns the time by the store's clock, if the transaction has
// one, and by the journal's otherwise.
func (j *Journal) clock(ctx context.Context, tx Tx) (time.Time, error) {
	if c, ok := tx.(Clock); ok {
		return c.Now(ctx)
	}
	return j.now(), nil
}

// rateMargin is the part of a lease that a sender gives up, so that its
// own clock, running at a slightly different rate from the store's, still
// ends the lease first.
const rateMargin = 100

// fence returns the deadline of a request sent under a lease of d taken
// after start, on start's monotonic clock.
func fence(start time.Time, d time.Duration) time.Time { return start.Add(d - d/rateMargin) }

// NewOperation describes an operation to record.
type NewOperation struct {
	Key, Kind, Subject string
	Evidence           Evidence
	// Guard, if set, is held by the operation while it is pending, sending
	// or ambiguous: no other operation with the same guard is recorded
	// meanwhile, by any process sharing the store; recording one returns
	// a *GuardError that names the holder. It is how one call on a
	// resource holds back the next while its outcome is open.
	Guard string
	// Replay, if set with ReplayWithin, names the effect: Start records
	// nothing, and returns a *ReplayError with the operation applied,
	// when an operation with the same Replay was applied within
	// ReplayWithin before, by the store's clock. It is decided in the
	// transaction of the sending commit, so that of two processes that
	// start the same effect one after the other, the second replays.
	Replay       string
	ReplayWithin time.Duration
}

// Insert records op as pending. If an operation with its key exists, Insert
// returns that one and created is false; if that operation has another
// kind or subject, the key is being reused for a different effect, and
// Insert returns it with an error wrapping ErrKeyConflict.
func (j *Journal) Insert(ctx context.Context, op NewOperation) (stored Operation, created bool, err error) {
	err = j.store.Update(ctx, func(tx Tx) error {
		stored, created, err = j.InsertTx(ctx, tx, op)
		return err
	})
	return stored, created, err
}

// InsertTx is Insert inside the caller's transaction.
func (j *Journal) InsertTx(ctx context.Context, tx Tx, op NewOperation) (Operation, bool, error) {
	if err := checkNew(op); err != nil {
		return Operation{}, false, err
	}
	now, err := j.clock(ctx, tx)
	if err != nil {
		return Operation{}, false, err
	}
	stored, created, err := tx.CreateOperation(ctx, Operation{
		Key: op.Key, Kind: op.Kind, Subject: op.Subject, State: Pending,
		Evidence: op.Evidence, Created: now, Updated: now, Guard: op.Guard, Replay: op.Replay,
	})
	if err != nil {
		return Operation{}, false, err
	}
	if !created && stored.Key != op.Key {
		return Operation{}, false, &GuardError{Guard: op.Guard, Open: stored}
	}
	if !created {
		if stored.Kind != op.Kind || stored.Subject != op.Subject {
			return stored, false, fmt.Errorf("%w: key %q names a %s operation on %q, not a %s operation on %q",
				ErrKeyConflict, op.Key, stored.Kind, stored.Subject, op.Kind, op.Subject)
		}
		return stored, false, nil
	}
	err = tx.AppendEntry(ctx, Entry{Key: op.Key, To: Pending, At: now, Actor: "journal", Reason: "recorded", Evidence: op.Evidence})
	return stored, true, err
}

// Get returns the operation with key.
func (j *Journal) Get(ctx context.Context, key string) (op Operation, err error) {
	if err := checkKey(key); err != nil {
		return Operation{}, err
	}
	err = j.store.View(ctx, func(tx Tx) error {
		op, err = tx.LockOperation(ctx, key)
		return err
	})
	return op, err
}

// List returns the operations that f selects, oldest first. When some
// cannot be read back (their stored evidence was damaged, say), List
// returns the others and an error joining a *CorruptError for each (see
// [Corrupt]).
func (j *Journal) List(ctx context.Context, f Filter) (ops []Operation, err error) {
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	err = j.store.View(ctx, func(tx Tx) error {
		ops, err = tx.Operations(ctx, f)
		return err
	})
	return ops, err
}

// History returns key's audit log, oldest first.
func (j *Journal) History(ctx context.Context, key string) (entries []Entry, err error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	err = j.store.View(ctx, func(tx Tx) error {
		if _, err := tx.LockOperation(ctx, key); err != nil {
			return err
		}
		entries, err = tx.Entries(ctx, key)
		return err
	})
	return entries, err
}

// Claim gives worker a lease on up to n pending operations of kind, and
// returns them. Operations whose previous worker's lease ran out are
// claimable again: nothing of theirs was sent. An operation that cannot be
// read back is not returned; it is reported in an error joining a
// *CorruptError for each, returned with the others.
func (j *Journal) Claim(ctx context.Context, kind, worker string, n int) (ops []Operation, err error) {
	if n < 1 {
		return nil, invalid(fmt.Errorf("claim of %d operations: n must be at least 1", n))
	}
	if err := checkName("worker", worker); err != nil {
		return nil, err
	}
	if err := input.Text("kind", kind, MaxKindBytes); err != nil {
		return nil, invalid(err)
	}
	var damaged error
	err = j.store.Update(ctx, func(tx Tx) error {
		now, err := j.clock(ctx, tx)
		if err != nil {
			return err
		}
		ops, err = tx.ClaimPending(ctx, kind, worker, j.instance, n, now, now.Add(j.lease))
		damaged, err = splitCorrupt(err)
		return err
	})
	if err != nil {
		return ops, err
	}
	return ops, damaged
}

// splitCorrupt tells an error that only reports unreadable operations,
// after which the readable ones are complete and the transaction may go
// on, from any other.
func splitCorrupt(err error) (damaged, other error) {
	if _, only := Corrupt(err); only {
		return err, nil
	}
	return nil, err
}

// ClaimKey gives worker a lease on the pending operation key, as Claim does
// for a kind. It fails with a *LeaseError while a lease taken by another
// worker, or through another journal, runs, and with a *TransitionError
// when the operation is not pending.
func (j *Journal) ClaimKey(ctx context.Context, key, worker string) (op Operation, err error) {
	if err := checkKey(key); err != nil {
		return Operation{}, err
	}
	if err := checkName("worker", worker); err != nil {
		return Operation{}, err
	}
	err = j.store.Update(ctx, func(tx Tx) error {
		op, err = j.claimKeyTx(ctx, tx, key, worker)
		return err
	})
	return op, err
}

func (j *Journal) claimKeyTx(ctx context.Context, tx Tx, key, worker string) (Operation, error) {
	op, err := tx.LockOperation(ctx, key)
	if err != nil {
		return Operation{}, err
	}
	now, err := j.clock(ctx, tx)
	if err != nil {
		return Operation{}, err
	}
	if op.State != Pending {
		return op, &TransitionError{Key: key, From: op.State, To: Pending, Why: "only a pending operation can be claimed; " + whyLeft(op.State)}
	}
	if (op.Worker != worker || op.Instance != j.instance) && !op.LeaseExpires.IsZero() && now.Before(op.LeaseExpires) {
		return op, &LeaseError{Key: key, Worker: worker, Holder: op.Worker, Elsewhere: op.Worker == worker}
	}
	op.Worker, op.Instance, op.LeaseExpires, op.Updated = worker, j.instance, now.Add(j.lease), now
	return op, tx.UpdateOperation(ctx, op)
}

// Release gives up worker's lease on the pending operation key, so that
// any worker may claim it at once: for an operation its worker chose not
// to send, such as one its budget could not pay for. An operation no longer
// pending, or leased by another worker, is left as it is.
func (j *Journal) Release(ctx context.Context, key, worker string) error {
	return j.store.Update(ctx, func(tx Tx) error { return j.ReleaseTx(ctx, tx, key, worker) })
}

// ReleaseTx is Release inside the caller's transaction.
func (j *Journal) ReleaseTx(ctx context.Context, tx Tx, key, worker string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkName("worker", worker); err != nil {
		return err
	}
	op, err := tx.LockOperation(ctx, key)
	if err != nil {
		return err
	}
	if op.State != Pending || op.Worker != worker || op.Instance != j.instance {
		return nil
	}
	now, err := j.clock(ctx, tx)
	if err != nil {
		return err
	}
	op.Worker, op.Instance, op.LeaseExpires, op.Updated = "", "", time.Time{}, now
	return tx.UpdateOperation(ctx, op)
}

// Start records op, claims it for worker and marks it sending, in one
// transaction: for an operation sent as soon as it is recorded, such as an
// agent's tool call, it costs one durable write instead of three. If the
// key exists, Start goes on only where Insert, ClaimKey and Send would.
func (j *Journal) Start(ctx context.Context, op NewOperation, worker string) (stored Operation, err error) {
	if err := checkName("worker", worker); err != nil {
		return Operation{}, err
	}
	if err := checkNew(op); err != nil {
		return Operation{}, err
	}
	err = j.store.Update(ctx, func(tx Tx) error {
		if _, _, err := j.InsertTx(ctx, tx, op); err != nil {
			return err
		}
		// Looked for after the insert that takes the guard: an operation
		// applied between the two is then seen here, never missed.
		if err := j.replayTx(ctx, tx, op); err != nil {
			return err
		}
		if _, err := j.claimKeyTx(ctx, tx, op.Key, worker); err != nil {
			return err
		}
		stored, err = j.SendTx(ctx, tx, op.Key, worker)
		return err
	})
	return stored, err
}

// replayTx returns a *ReplayError, which rolls the transaction back, if an
// operation with op's replay key was applied within op's window.
func (j *Journal) replayTx(ctx context.Context, tx Tx, op NewOperation) error {
	if op.Replay == "" || op.ReplayWithin <= 0 {
		return nil
	}
	now, err := j.clock(ctx, tx)
	if err != nil {
		return err
	}
	applied, ok, err := tx.LastApplied(ctx, op.Replay, now.Add(-op.ReplayWithin))
	if err != nil || !ok {
		return err
	}
	return &ReplayError{Replay: op.Replay, Applied: applied}
}

// Renew extends worker's leases on keys to the lease duration from now,
// by the store's clock; a lease that already runs longer (a sending
// commit's) is left as it is. It returns a *LeaseError for the first key
// whose lease the worker no longer holds through this journal; the others
// are renewed all the same.
func (j *Journal) Renew(ctx context.Context, worker string, keys ...string) error {
	if err := checkName("worker", worker); err != nil {
		return err
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	var renewed []string
	err := j.store.Update(ctx, func(tx Tx) (err error) {
		now, err := j.clock(ctx, tx)
		if err != nil {
			return err
		}
		renewed, err = tx.RenewLeases(ctx, worker, j.instance, keys, now, now.Add(j.lease))
		return err
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !slices.Contains(renewed, k) {
			return &LeaseError{Key: k, Worker: worker}
		}
	}
	return nil
}

// Send commits that worker is about to send key's request: pending →
// sending. Call it, and let it return, before the request's first byte is
// written, and send the request under the returned operation's
// [Operation.Fence].
func (j *Journal) Send(ctx context.Context, key, worker string) (op Operation, err error) {
	err = j.store.Update(ctx, func(tx Tx) error {
		op, err = j.SendTx(ctx, tx, key, worker)
		return err
	})
	return op, err
}

// SendTx is Send inside the caller's transaction, for example with the
// budget hold that pays for the request. The returned operation's
// Deadline counts from the call, before the commit: the request it
// bounds may start only once the transaction has committed.
func (j *Journal) SendTx(ctx context.Context, tx Tx, key, worker string) (Operation, error) {
	if err := checkKey(key); err != nil {
		return Operation{}, err
	}
	if err := checkName("worker", worker); err != nil {
		return Operation{}, err
	}
	// Before the store's clock is read: the store's lease then ends no
	// sooner than the sender's deadline.
	start := time.Now()
	now, err := j.clock(ctx, tx)
	if err != nil {
		return Operation{}, err
	}
	deadline := fence(start, j.sendLease)
	if m, ok := tx.(Mover); ok {
		op, moved, err := m.Move(ctx, Move{Key: key, Worker: worker, Instance: j.instance, From: Pending, To: Sending,
			LeaseAfter: now, AddAttempt: true, Lease: now.Add(j.sendLease), Updated: now})
		if err != nil {
			return Operation{}, err
		}
		if moved {
			op.Deadline = deadline
			return op, tx.AppendEntry(ctx, Entry{Key: key, From: Pending, To: Sending, At: now, Actor: worker,
				Reason: fmt.Sprintf("attempt %d about to be sent", op.Attempts)})
		}
	}
	op, err := tx.LockOperation(ctx, key)
	if err != nil {
		return Operation{}, err
	}
	if op.State != Pending {
		return op, j.refusal(op, Sending)
	}
	if err := j.holds(op, worker, now); err != nil {
		return op, err
	}
	from := op.State
	op.State = Sending
	op.Attempts++
	op.LeaseExpires = now.Add(j.sendLease)
	op.Updated = now
	if err := tx.UpdateOperation(ctx, op); err != nil {
		return Operation{}, err
	}
	op.Deadline = deadline
	return op, tx.AppendEntry(ctx, Entry{Key: key, From: from, To: Sending, At: now, Actor: worker,
		Reason: fmt.Sprintf("attempt %d about to be sent", op.Attempts)})
}

// Annotate merges evidence into the sending operation key that worker
// holds, durably, without changing its state: what a worker learns in the
// middle of a request (an upload URL, a provider's job id) survives a
// crash, and guides whoever settles an ambiguous outcome.
func (j *Journal) Annotate(ctx context.Context, key, worker string, ev Evidence) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkEvidence(ev); err != nil {
		return err
	}
	return j.store.Update(ctx, func(tx Tx) error {
		op, err := tx.LockOperation(ctx, key)
		if err != nil {
			return err
		}
		if op.State != Sending {
			return &TransitionError{Key: key, From: op.State, To: op.State, Why: "only an operation being sent takes annotations"}
		}
		if op.Worker != worker || op.Instance != j.instance {
			return &LeaseError{Key: key, Worker: worker, Holder: op.Worker, Elsewhere: op.Worker == worker}
		}
		now, err := j.clock(ctx, tx)
		if err != nil {
			return err
		}
		op.Evidence = op.Evidence.merge(ev)
		op.Updated = now
		return tx.UpdateOperation(ctx, op)
	})
}

// Report is a worker's account of how an attempt ended.
type Report struct {
	// Worker is the worker that holds the operation.
	Worker string
	// To is the state the attempt ended in: Applied, NotApplied, FailedSafe
	// or Ambiguous.
	To State
	// Phase is how far a failed attempt got, and Detail what went wrong.
	Phase  rubicon.Phase
	Detail string
	// Evidence is merged into the operation's.
	Evidence Evidence
	// Attempt, if set, is the attempt the report is about, as the sending
	// commit counted it (Operation.Attempts): a report about another
	// attempt than the operation's last is refused.
	Attempt int
	// Instance, if set, is the journal the attempt was sent through
	// (Operation.Instance), for a report that another journal records on
	// its behalf: an answer kept on the worker's disk when it could not be
	// recorded, and recorded from there by a later run. Set Attempt with
	// it. Empty: this journal.
	Instance string
}

// ReportCall builds the report of an attempt whose call returned resp and
// err, by rubicon's one rule for what an answer proves ([retry.Outcome]):
//
//   - an error says itself what it proves: a *rubicon.Error from rubicon's
//     transport carries its outcome (not sent is FailedSafe, a refusal
//     NotApplied, anything that may have been applied Ambiguous); any other
//     error proves nothing and is Ambiguous;
//   - a response is judged by its status, as the answer to a request with
//     an effect whatever its method (the journal records side effects):
//     2xx and 303 are Applied; 4xx, 307 and 308 NotApplied; 5xx and any
//     other status Ambiguous;
//   - no response and no error proves nothing, and is Ambiguous.
//
// A status that the API declares "not processed" is known to the
// transport's policy, not to the journal: a 5xx is Ambiguous here whatever
// the policy declares. Retry-After changes nothing.
func ReportCall(worker string, resp *http.Response, err error) Report {
	r := Report{Worker: worker}
	if err != nil {
		return reportError(r, err)
	}
	if resp == nil {
		r.To, r.Phase = Ambiguous, rubicon.Sent
		r.Detail = "neither a response nor an error: nothing shows whether the request was applied"
		return r
	}
	method := ""
	if resp.Request != nil {
		method = resp.Request.Method
	}
	// NotSentOnly: judged as a request with an effect, even for a GET.
	outcome := retry.Outcome(retry.Result{Method: method, Mode: retry.NotSentOnly, Phase: rubicon.Answered, Status: resp.StatusCode})
	r.Phase = rubicon.Answered
	r.Evidence = Evidence{"status": resp.StatusCode}
	r.To = stateOf(outcome)
	if r.To != Applied {
		r.Detail = fmt.Sprintf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return r
}

// ReportFor is ReportCall without the response: ReportCall(worker, nil,
// err). A nil error does not show what the answer was, so it is reported
// Ambiguous, never Applied.
//
// Deprecated: use ReportCall, which judges the response too.
func ReportFor(worker string, err error) Report { return ReportCall(worker, nil, err) }

// reportError is ReportCall for a call that returned an error.
func reportError(r Report, err error) Report {
	r.Detail = err.Error()
	var e *rubicon.Error
	if !errors.As(err, &e) {
		// Nothing proves where the failure happened.
		r.To, r.Phase = Ambiguous, rubicon.Sent
		return r
	}
	r.Phase = e.Phase
	r.Evidence = Evidence{"attempts": e.Attempts, "bytes_written": e.BytesWritten}
	if e.StatusCode != 0 {
		r.Evidence["status"] = e.StatusCode
	}
	switch {
	case e.Outcome == rubicon.NotApplied && e.Phase == rubicon.NotSent:
		r.To = FailedSafe
	default:
		r.To = stateOf(e.Outcome)
	}
	return r
}

// StateOf returns the state an operation ends in when its attempt has
// outcome: Applied, NotApplied, or Ambiguous for Unknown (and for anything
// else).
func StateOf(outcome rubicon.Outcome) State { return stateOf(outcome) }

func stateOf(outcome rubicon.Outcome) State {
	switch outcome {
	case rubicon.Applied:
		return Applied
	case rubicon.NotApplied:
		return NotApplied
	}
	return Ambiguous
}

// Record stores how an attempt of key ended. From sending, every outcome
// is allowed; from pending (a failure before Send), only FailedSafe. Only
// the worker that holds the operation, through this journal, reports.
//
// An answer that arrives after recovery made the operation ambiguous is
// kept, never thrown away: the worker that sent the attempt reports it as
// usual, and a definitive one settles the operation (recorded as a
// resolution by the worker, with the audit log saying so): Applied stays
// applied, NotApplied not applied, and FailedSafe (the attempt provably
// never left) becomes not applied. A late Ambiguous report adds its
// evidence and changes nothing else.
//
// An Ambiguous report keeps the lease the attempt was sent under: until it
// runs out, the request might still be on its way, and [Journal.Resolve]
// refuses to settle it as not applied.
func (j *Journal) Record(ctx context.Context, key string, r Report) (op Operation, err error) {
	if err := checkReport(key, r); err != nil {
		return Operation{}, err
	}
	err = j.store.Update(ctx, func(tx Tx) error {
		op, err = j.RecordTx(ctx, tx, key, r)
		return err
	})
	return op, err
}

// RecordTx is Record inside the caller's transaction, for example with the
// settlement of the operation's budget hold.
func (j *Journal) RecordTx(ctx context.Context, tx Tx, key string, r Report) (Operation, error) {
	if err := checkReport(key, r); err != nil {
		return Operation{}, err
	}
	r.Detail = cleanDetail(r.Detail)
	now, err := j.clock(ctx, tx)
	if err != nil {
		return Operation{}, err
	}
	reason := r.Detail
	if reason == "" {
		reason = string(r.To)
	}
	instance := r.Instance
	if instance == "" {
		instance = j.instance
	}
	if m, ok := tx.(Mover); ok && CanTransition(Sending, r.To) && r.To != Ambiguous {
		// The usual case, in one step: the worker that sent reports.
		op, moved, err := m.Move(ctx, Move{Key: key, Worker: r.Worker, Instance: instance, Attempt: r.Attempt, From: Sending, To: r.To,
			Failure: r.To != Applied, LastPhase: r.Phase, LastError: r.Detail, Evidence: r.Evidence, Updated: now})
		if err != nil {
			return Operation{}, err
		}
		if moved {
			return op, tx.AppendEntry(ctx, Entry{Key: key, From: Sending, To: r.To, At: now, Actor: r.Worker, Reason: reason, Evidence: r.Evidence})
		}
	}
	op, err := tx.LockOperation(ctx, key)
	if err != nil {
		return Operation{}, err
	}
	mine := op.Worker == r.Worker && op.Instance == instance && (r.Attempt == 0 || r.Attempt == op.Attempts)
	switch {
	case op.State == Sending && mine:
		// The usual case; a lease that ran out still lets the sender
		// report, since recovery has not yet declared the outcome unknown.
	case op.State == Pending && r.To == FailedSafe && r.Instance == "":
		if err := j.holds(op, r.Worker, now); err != nil {
			return op, err
		}
	case op.State == Ambiguous && mine && op.Resolution == nil:
		return j.lateReport(ctx, tx, op, r, now)
	case op.State == Sending:
		return op, &LeaseError{Key: key, Worker: r.Worker, Holder: op.Worker, Elsewhere: op.Worker == r.Worker}
	default:
		return op, j.refusal(op, r.To)
	}
	if !CanTransition(op.State, r.To) {
		return op, j.refusal(op, r.To)
	}
	from := op.State
	op.State = r.To
	if r.To != Applied {
		op.LastPhase, op.LastError = r.Phase, r.Detail
	}
	op.Evidence = op.Evidence.merge(r.Evidence)
	if r.To != Ambiguous {
		op.LeaseExpires = time.Time{}
	}
	op.Updated = now
	if err := tx.UpdateOperation(ctx, op); err != nil {
		return Operation{}, err
	}
	return op, tx.AppendEntry(ctx, Entry{Key: key, From: from, To: r.To, At: now, Actor: r.Worker, Reason: reason, Evidence: r.Evidence})
}

// lateReport records the report of the sender of op's last attempt after
// the operation was made ambiguous without it (by recovery): the answer is
// evidence, and a definitive one settles the operation.
func (j *Journal) lateReport(ctx context.Context, tx Tx, op Operation, r Report, now time.Time) (Operation, error) {
	op.Evidence = op.Evidence.merge(r.Evidence)
	op.Updated = now
	to := r.To
	switch to {
	case Applied, NotApplied:
	case FailedSafe:
		to = NotApplied // never sent: nothing was applied
	case Ambiguous:
		// Nothing new about the outcome: its evidence is kept.
		return op, tx.UpdateOperation(ctx, op)
	default:
		return op, j.refusal(op, to)
	}
	what := "the answer arrived after the outcome had been declared unknown"
	if r.To == FailedSafe {
		what = "the attempt was proven never sent after the outcome had been declared unknown"
	}
	detail := r.Detail
	if detail == "" {
		detail = string(r.To)
	}
	note := fmt.Sprintf("%s: %s (reported by its sender, %s)", what, detail, r.Worker)
	op.State = to
	op.Resolution = &Resolution{To: to, By: r.Worker, Note: note, At: now, Evidence: r.Evidence}
	if to != Applied {
		op.LastPhase, op.LastError = r.Phase, r.Detail
	}
	op.LeaseExpires = time.Time{}
	if err := tx.UpdateOperation(ctx, op); err != nil {
		return Operation{}, err
	}
	return op, tx.AppendEntry(ctx, Entry{Key: op.Key, From: Ambiguous, To: to, At: now, Actor: r.Worker, Reason: "late answer: " + note, Evidence: r.Evidence})
}

// Resolve settles an ambiguous operation with a person's decision, or a
// reconciliation's, recorded with who, when, why and evidence. A
// resolution as not applied is refused, with a *TransitionError whose
// Until says when it becomes possible, while the lease the request was
// sent under runs: its sender might still be sending it.
func (j *Journal) Resolve(ctx context.Context, key string, res Resolution) (op Operation, err error) {
	if err := checkResolution(key, res); err != nil {
		return Operation{}, err
	}
	err = j.store.Update(ctx, func(tx Tx) error {
		op, err = j.ResolveTx(ctx, tx, key, res)
		return err
	})
	return op, err
}

// ResolveTx is Resolve inside the caller's transaction, for example with
// the settlement or release of the operation's budget hold.
func (j *Journal) ResolveTx(ctx context.Context, tx Tx, key string, res Resolution) (Operation, error) {
	if res.To != Applied && res.To != NotApplied {
		return Operation{}, fmt.Errorf("resolving operation %q: the outcome must be %s or %s, not %q", key, Applied, NotApplied, res.To)
	}
	if strings.TrimSpace(res.By) == "" || strings.TrimSpace(res.Note) == "" {
		return Operation{}, fmt.Errorf("resolving operation %q: say who decided (By) and why (Note)", key)
	}
	if err := checkResolution(key, res); err != nil {
		return Operation{}, err
	}
	op, err := tx.LockOperation(ctx, key)
	if err != nil {
		return Operation{}, err
	}
	if op.State != Ambiguous {
		return op, j.refusal(op, res.To)
	}
	now, err := j.clock(ctx, tx)
	if err != nil {
		return Operation{}, err
	}
	if res.To == NotApplied && !op.LeaseExpires.IsZero() && now.Before(op.LeaseExpires) {
		return op, &TransitionError{Key: key, From: op.State, To: res.To, Until: op.LeaseExpires,
			Why: fmt.Sprintf("the lease its request was sent under runs until %s (%s from now, by the store's clock), and until then the request may still be written or answered: resolve it as not applied after then, or as applied at any time",
				op.LeaseExpires.UTC().Format(time.RFC3339), op.LeaseExpires.Sub(now).Round(time.Second))}
	}
	res.At = now
	op.State = res.To
	op.Resolution = &res
	op.Evidence = op.Evidence.merge(res.Evidence)
	op.LeaseExpires = time.Time{}
	op.Updated = now
	if err := tx.UpdateOperation(ctx, op); err != nil {
		return Operation{}, err
	}
	return op, tx.AppendEntry(ctx, Entry{Key: key, From: Ambiguous, To: res.To, At: now, Actor: res.By, Reason: "resolved: " + res.Note, Evidence: res.Evidence})
}

// Recover makes every operation that is in sending with a lease that ran
// out ambiguous: its worker stopped after the request may have been sent.
// It returns the operations it changed. Run it when workers start and from
// time to time; Claim never hands these operations out.
func (j *Journal) Recover(ctx context.Context) ([]Operation, error) {
	var all []Operation
	var damaged []*CorruptError
	for {
		var batch []Operation
		var unreadable []*CorruptError
		err := j.store.Update(ctx, func(tx Tx) error {
			now, err := j.clock(ctx, tx)
			if err != nil {
				return err
			}
			expired, err := tx.ExpiredSending(ctx, now, 100)
			bad, err := splitCorrupt(err)
			if err != nil {
				return err
			}
			unreadable, _ = Corrupt(bad)
			batch = batch[:0]
			for _, op := range expired {
				detail := fmt.Sprintf("worker %q stopped while sending attempt %d (lease ran out at %s)",
					op.Worker, op.Attempts, op.LeaseExpires.UTC().Format(time.RFC3339Nano))
				op.State = Ambiguous
				op.LastPhase, op.LastError = rubicon.Sent, detail
				op.Evidence = op.Evidence.merge(Evidence{"lease_expired_at": op.LeaseExpires.UTC().Format(time.RFC3339Nano)})
				op.Updated = now
				if err := tx.UpdateOperation(ctx, op); err != nil {
					return err
				}
				if err := tx.AppendEntry(ctx, Entry{Key: op.Key, From: Sending, To: Ambiguous, At: now, Actor: "recovery", Reason: detail}); err != nil {
					return err
				}
				batch = append(batch, op)
			}
			return nil
		})
		if err != nil {
			return all, err
		}
		all = append(all, batch...)
		if len(batch)+len(unreadable) < 100 {
			return all, corruptError(append(damaged, unreadable...))
		}
		if len(batch) == 0 {
			// A whole batch of unreadable operations: they stay sending,
			// and are reported, until repaired.
			return all, corruptError(append(damaged, unreadable...))
		}
		damaged = append(damaged, unreadable...)
	}
}

func corruptError(errs []*CorruptError) error {
	var out []error
	seen := map[string]bool{}
	for _, e := range errs {
		if !seen[e.Key] {
			seen[e.Key] = true
			out = append(out, e)
		}
	}
	return errors.Join(out...)
}

// Scope selects the operations RetrySafe considers, as [Filter] does.
type Scope struct {
	Kind          string
	SubjectPrefix string
	Keys          []string
	// By names who asked, for the audit log.
	By string
}

// Left is an operation RetrySafe did not move, and why.
type Left struct {
	Key   string
	State State
	Why   string
}

// RetryReport says what RetrySafe moved and what it left.
type RetryReport struct {
	Moved []string
	Left  []Left
}

// RetrySafe moves the operations of scope that provably had no effect
// (failed_safe and not_applied) back to pending, and reports every other
// operation of the scope with the reason it stayed, those that cannot be
// read back included. It never touches an ambiguous operation.
func (j *Journal) RetrySafe(ctx context.Context, scope Scope) (RetryReport, error) {
	var rep RetryReport
	by := scope.By
	if by == "" {
		by = "retry-safe"
	}
	if err := checkName("the name of who asked (By)", by); err != nil {
		return rep, err
	}
	f := Filter{Kind: scope.Kind, SubjectPrefix: scope.SubjectPrefix, Keys: scope.Keys}
	if err := checkFilter(f); err != nil {
		return rep, err
	}
	err := j.store.Update(ctx, func(tx Tx) error {
		rep = RetryReport{}
		ops, err := tx.Operations(ctx, f)
		damaged, err := splitCorrupt(err)
		if err != nil {
			return err
		}
		bad, _ := Corrupt(damaged)
		for _, e := range bad {
			rep.Left = append(rep.Left, Left{Key: e.Key, Why: "its stored record cannot be read (" + e.Error() + ")"})
		}
		now, err := j.clock(ctx, tx)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if op.State != FailedSafe && op.State != NotApplied {
				rep.Left = append(rep.Left, Left{Key: op.Key, State: op.State, Why: whyLeft(op.State)})
				continue
			}
			if op, err = tx.LockOperation(ctx, op.Key); err != nil {
				return err
			}
			if op.State != FailedSafe && op.State != NotApplied {
				// Changed since it was listed.
				rep.Left = append(rep.Left, Left{Key: op.Key, State: op.State, Why: whyLeft(op.State)})
				continue
			}
			from := op.State
			op.State = Pending
			op.Worker, op.Instance, op.LeaseExpires = "", "", time.Time{}
			op.Updated = now
			if err := tx.UpdateOperation(ctx, op); err != nil {
				return err
			}
			if err := tx.AppendEntry(ctx, Entry{Key: op.Key, From: from, To: Pending, At: now, Actor: by,
				Reason: "safe retry: " + string(from) + " had no effect"}); err != nil {
				return err
			}
			rep.Moved = append(rep.Moved, op.Key)
		}
		return nil
	})
	return rep, err
}

func whyLeft(s State) string {
	switch s {
	case Ambiguous:
		return "its outcome is unknown: resolve it, or reconcile it with the provider, first"
	case Sending:
		return "it is being sent now"
	case Pending:
		return "it is already waiting to be sent"
	case Applied:
		return "it was applied"
	}
	return "not a safe retry"
}

// refusal explains why op cannot move to to.
func (j *Journal) refusal(op Operation, to State) error {
	e := &TransitionError{Key: op.Key, From: op.State, To: to}
	switch {
	case op.State == Ambiguous:
		e.Why = "its outcome is unknown; only a resolution (applied or not_applied, with who and why), or the answer that its sender received, can settle it"
	case op.Resolution != nil:
		e.Why = fmt.Sprintf("it was resolved as %s by %s at %s", op.Resolution.To, op.Resolution.By, op.Resolution.At.UTC().Format(time.RFC3339))
	case op.State == Applied:
		e.Why = "it was applied; an applied operation is final"
	case to == Sending && (op.State == FailedSafe || op.State == NotApplied):
		e.Why = "move it back to pending with a safe retry first"
	case to == Applied || to == NotApplied:
		e.Why = "only an operation being sent, or an ambiguous one, receives an outcome"
	default:
		e.Why = "the state machine does not allow it"
	}
	return e
}

// holds checks that worker holds a live lease on op through this journal.
func (j *Journal) holds(op Operation, worker string, now time.Time) error {
	if op.Worker != worker || op.Instance != j.instance || op.LeaseExpires.IsZero() {
		return &LeaseError{Key: op.Key, Worker: worker, Holder: op.Worker, Elsewhere: op.Worker == worker && op.Instance != j.instance && !op.LeaseExpires.IsZero()}
	}
	if !now.Before(op.LeaseExpires) {
		return &LeaseError{Key: op.Key, Worker: worker, Expired: op.LeaseExpires}
	}
	return nil
}
