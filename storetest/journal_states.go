package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// stateCases are the cases of the state machine: inserts, every transition,
// safe retries, resolutions, unknown keys, Start and Annotate.
func stateCases() []testCase {
	return []testCase{
		{name: "HappyPathIsAudited", run: happyPathIsAudited},
		{name: "InsertIsIdempotentPerKey", run: insertIsIdempotentPerKey},
		{name: "EveryTransition", run: everyTransition},
		{name: "RetrySafeNeverTouchesAmbiguous", run: retrySafeNeverTouchesAmbiguous},
		{name: "ResolveRecordsWhoWhenWhy", run: resolveRecordsWhoWhenWhy},
		{name: "UnknownKeys", run: unknownKeys},
		{name: "Start", run: start},
		{name: "Annotate", run: annotate},
	}
}

// action is one attempt at a transition.
type action struct {
	name string
	to   journal.State
	do   func(e *env, key string) error
}

func actions() []action {
	record := func(to journal.State) func(e *env, key string) error {
		return func(e *env, key string) error {
			if err := claimIfPending(e, key); err != nil {
				return err
			}
			_, err := e.j.Record(e.ctx, key, journal.Report{Worker: "w1", To: to, Detail: "test"})
			return err
		}
	}
	resolve := func(to journal.State) func(e *env, key string) error {
		return func(e *env, key string) error {
			// After the lease the request was sent under: until then, not
			// applied is refused (see NotAppliedWaitsForTheLease).
			e.clock.Advance(lease + time.Second)
			_, err := e.j.Resolve(e.ctx, key, journal.Resolution{To: to, By: "ana", Note: "checked the provider's dashboard"})
			return err
		}
	}
	return []action{
		{"send", journal.Sending, func(e *env, key string) error {
			if err := claimIfPending(e, key); err != nil {
				return err
			}
			_, err := e.j.Send(e.ctx, key, "w1")
			return err
		}},
		{"record applied", journal.Applied, record(journal.Applied)},
		{"record not_applied", journal.NotApplied, record(journal.NotApplied)},
		{"record failed_safe", journal.FailedSafe, record(journal.FailedSafe)},
		{"record ambiguous", journal.Ambiguous, record(journal.Ambiguous)},
		{"record pending", journal.Pending, record(journal.Pending)},
		{"record sending", journal.Sending, record(journal.Sending)},
		{"resolve applied", journal.Applied, resolve(journal.Applied)},
		{"resolve not_applied", journal.NotApplied, resolve(journal.NotApplied)},
		{"retry safe", journal.Pending, func(e *env, key string) error {
			rep, err := e.j.RetrySafe(e.ctx, journal.Scope{Kind: "charge", SubjectPrefix: "batch/" + key})
			if err != nil {
				return err
			}
			if len(rep.Moved) != 1 {
				return fmt.Errorf("left: %+v", rep.Left)
			}
			return nil
		}},
	}
}

// claimIfPending gives w1 the lease on a pending operation, as a worker
// would hold it before acting.
func claimIfPending(e *env, key string) error {
	if op, _ := e.j.Get(e.ctx, key); op.State == journal.Pending {
		_, err := e.j.Claim(e.ctx, "charge", "w1", 10)
		return err
	}
	return nil
}

// legalActions lists, for each state, the actions that must succeed; every
// other action must fail and leave the operation as it was.
var legalActions = map[journal.State][]string{
	journal.Pending:    {"send", "record failed_safe"},
	journal.FailedSafe: {"retry safe"},
	journal.Sending:    {"record applied", "record not_applied", "record failed_safe", "record ambiguous"},
	journal.Applied:    {},
	journal.NotApplied: {"retry safe"},
	journal.Ambiguous:  {"resolve applied", "resolve not_applied", "record applied", "record not_applied", "record failed_safe"},
}

// lateReports are the states that the reports of an ambiguous
// operation's sender (w1) settle it in: its answer is kept, and an
// attempt proven never sent applied nothing.
var lateReports = map[string]journal.State{
	"record applied":     journal.Applied,
	"record not_applied": journal.NotApplied,
	"record failed_safe": journal.NotApplied,
}

// happyPathIsAudited: an operation claimed, sent and applied reads back
// with its evidence and worker, and its audit log holds each step, its
// actor and the evidence.
func happyPathIsAudited(t *testing.T, h Harness) {
	e := open(t, h)
	e.insert(t, "k1")
	e.claim(t, "k1", "w1")
	op, err := e.j.Send(e.ctx, "k1", "w1")
	if err != nil || op.State != journal.Sending || op.Attempts != 1 || op.LeaseExpires.IsZero() {
		t.Fatalf("send: %+v, %v", op, err)
	}
	op, err = e.j.Record(e.ctx, "k1", journal.Report{Worker: "w1", To: journal.Applied, Evidence: journal.Evidence{"request_id": "req_1"}})
	if err != nil || op.State != journal.Applied || op.Evidence["request_id"] != "req_1" || !op.LeaseExpires.IsZero() {
		t.Fatalf("record applied: %+v, %v", op, err)
	}
	got, err := e.j.Get(e.ctx, "k1")
	if err != nil || got.State != journal.Applied || got.Evidence["request_id"] != "req_1" || got.Worker != "w1" {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	hist, err := e.j.History(e.ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, h := range hist {
		path = append(path, string(h.From)+">"+string(h.To)+"@"+h.Actor)
	}
	if want := ">pending@journal,pending>sending@w1,sending>applied@w1"; strings.Join(path, ",") != want {
		t.Fatalf("audit %v, want %s", path, want)
	}
	if hist[2].Evidence["request_id"] != "req_1" {
		t.Fatalf("the audit entry lost the evidence: %+v", hist[2])
	}
}

// insertIsIdempotentPerKey: a second insert of a key returns the stored
// operation, the key used for another kind is a conflict, incomplete
// operations are refused, and only the first insert is audited.
func insertIsIdempotentPerKey(t *testing.T, h Harness) {
	e := open(t, h)
	op := e.insert(t, "order-7")
	if op.State != journal.Pending || op.Kind != "charge" || op.Subject != "batch/order-7" || op.Attempts != 0 {
		t.Fatalf("inserted %+v", op)
	}
	again, created, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "order-7", Kind: "charge", Subject: "batch/order-7"})
	if err != nil || created || again.Key != "order-7" || !again.Created.Equal(op.Created) {
		t.Fatalf("second insert: %+v created %v, %v; want the existing operation", again, created, err)
	}
	_, _, err = e.j.Insert(e.ctx, journal.NewOperation{Key: "order-7", Kind: "refund", Subject: "batch/order-7"})
	if !errors.Is(err, journal.ErrKeyConflict) || !strings.Contains(err.Error(), "order-7") {
		t.Fatalf("reusing a key for another kind: %v", err)
	}
	for _, bad := range []journal.NewOperation{{Kind: "charge"}, {Key: "  ", Kind: "charge"}, {Key: "k"}} {
		if _, _, err := e.j.Insert(e.ctx, bad); err == nil {
			t.Errorf("insert %+v accepted", bad)
		}
	}
	hist, err := e.j.History(e.ctx, "order-7")
	if err != nil || len(hist) != 1 || hist[0].From != "" || hist[0].To != journal.Pending {
		t.Fatalf("history after inserts: %+v, %v; want one creation entry", hist, err)
	}
}

// everyTransition: drives an operation into each state and tries every
// action on it: the legal ones move it where the state machine says, the
// others fail with an error and change nothing, audit log included.
func everyTransition(t *testing.T, h Harness) {
	e := open(t, h)
	for _, from := range journal.States {
		for _, a := range actions() {
			key := uniqueKey(string(from))
			e.into(t, key, from)
			before, _ := e.j.Get(e.ctx, key)
			histBefore, _ := e.j.History(e.ctx, key)
			err := a.do(e, key)
			after, _ := e.j.Get(e.ctx, key)
			histAfter, _ := e.j.History(e.ctx, key)
			legal := false
			for _, name := range legalActions[from] {
				legal = legal || name == a.name
			}
			if from == journal.Ambiguous && a.name == "record ambiguous" {
				// The sender's late account that adds nothing: kept
				// as evidence, no transition.
				if err != nil || after.State != journal.Ambiguous || len(histAfter) != len(histBefore) {
					t.Errorf("ambiguous, a late ambiguous report: %v, now %s, audit %d → %d; want it kept without a transition", err, after.State, len(histBefore), len(histAfter))
				}
				continue
			}
			if legal {
				to := a.to
				if late, ok := lateReports[a.name]; ok && from == journal.Ambiguous {
					to = late
				}
				if err != nil {
					t.Errorf("%s, %s: legal, yet %v", from, a.name, err)
					continue
				}
				if after.State != to {
					t.Errorf("%s, %s: now %s, want %s", from, a.name, after.State, to)
				}
				if !journal.CanTransition(from, to) {
					t.Errorf("%s, %s: succeeded but the state machine has no %s → %s", from, a.name, from, to)
				}
				last := histAfter[len(histAfter)-1]
				if len(histAfter) != len(histBefore)+1 || last.From != from || last.To != to {
					t.Errorf("%s, %s: audit %+v, want one more entry %s → %s", from, a.name, last, from, to)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s, %s: illegal, yet it succeeded (now %s)", from, a.name, after.State)
				continue
			}
			if after.State != before.State || after.Attempts != before.Attempts || len(histAfter) != len(histBefore) {
				t.Errorf("%s, %s: refused (%v) but changed the operation: %s → %s, audit %d → %d", from, a.name, err, before.State, after.State, len(histBefore), len(histAfter))
			}
			if !errors.Is(err, journal.ErrIllegalTransition) && !errors.Is(err, journal.ErrLeaseLost) && !strings.Contains(err.Error(), "left") && !strings.Contains(err.Error(), "must be") {
				t.Errorf("%s, %s: error %v is not a transition or lease error", from, a.name, err)
			}
			if !strings.Contains(err.Error(), key) && !strings.Contains(err.Error(), "left") {
				t.Errorf("%s, %s: error %q does not name the operation", from, a.name, err)
			}
		}
	}
}

// retrySafeNeverTouchesAmbiguous: a safe retry moves back to pending only
// the operations proven never applied (failed safe, not applied) and leaves
// every other state, ambiguous above all, as it was.
func retrySafeNeverTouchesAmbiguous(t *testing.T, h Harness) {
	e := open(t, h)
	for _, s := range journal.States {
		e.into(t, "x-"+string(s), s)
	}
	rep, err := e.j.RetrySafe(e.ctx, journal.Scope{Kind: "charge", By: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Moved, ",") != "x-failed_safe,x-not_applied" {
		t.Fatalf("moved %v, want the failed_safe and not_applied operations", rep.Moved)
	}
	left := map[string]string{}
	for _, l := range rep.Left {
		left[l.Key] = l.Why
	}
	if len(left) != 4 || !strings.Contains(left["x-ambiguous"], "unknown") || !strings.Contains(left["x-sending"], "being sent") {
		t.Fatalf("left %+v", rep.Left)
	}
	if op, _ := e.j.Get(e.ctx, "x-ambiguous"); op.State != journal.Ambiguous {
		t.Fatalf("ambiguous operation moved to %s", op.State)
	}
	if op, _ := e.j.Get(e.ctx, "x-failed_safe"); op.State != journal.Pending || op.Worker != "" {
		t.Fatalf("failed_safe operation is %+v", op)
	}
	hist, _ := e.j.History(e.ctx, "x-not_applied")
	if last := hist[len(hist)-1]; last.Actor != "ana" || last.To != journal.Pending {
		t.Fatalf("retry's audit entry: %+v", last)
	}
	// The scope narrows by subject.
	e.into(t, "y-1", journal.FailedSafe)
	rep, _ = e.j.RetrySafe(e.ctx, journal.Scope{Kind: "charge", SubjectPrefix: "batch/x-"})
	if len(rep.Moved) != 0 {
		t.Fatalf("a scope of batch/x- moved %v", rep.Moved)
	}
}

// resolveRecordsWhoWhenWhy: a resolution needs a person's name, a note and
// a settled state, and is recorded with all three.
func resolveRecordsWhoWhenWhy(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "amb", journal.Ambiguous)
	for _, bad := range []journal.Resolution{
		{To: journal.Applied, Note: "no name"},
		{To: journal.Applied, By: "ana"},
		{To: journal.Pending, By: "ana", Note: "n"},
	} {
		if _, err := e.j.Resolve(e.ctx, "amb", bad); err == nil {
			t.Errorf("resolution %+v accepted", bad)
		}
	}
	e.clock.Advance(lease + time.Second) // the lease it was sent under is over
	op, err := e.j.Resolve(e.ctx, "amb", journal.Resolution{To: journal.NotApplied, By: "ana", Note: "no charge in the dashboard",
		Evidence: journal.Evidence{"dashboard": "checked"}})
	if err != nil || op.State != journal.NotApplied || op.Resolution == nil || op.Resolution.By != "ana" || op.Resolution.At.IsZero() {
		t.Fatalf("resolve: %+v, %v", op, err)
	}
	got, _ := e.j.Get(e.ctx, "amb")
	if got.Resolution == nil || got.Resolution.Note != "no charge in the dashboard" || got.Resolution.Evidence["dashboard"] != "checked" {
		t.Fatalf("resolution read back: %+v", got.Resolution)
	}
	_, err = e.j.Resolve(e.ctx, "amb", journal.Resolution{To: journal.Applied, By: "bo", Note: "twice"})
	if !errors.Is(err, journal.ErrIllegalTransition) || !strings.Contains(err.Error(), "resolved as not_applied by ana") {
		t.Fatalf("resolving twice: %v", err)
	}
	e.into(t, "done", journal.Applied)
	if _, err := e.j.Resolve(e.ctx, "done", journal.Resolution{To: journal.NotApplied, By: "bo", Note: "n"}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("resolving an operation that is not ambiguous: %v", err)
	}
}

// unknownKeys: every call on a key the journal has never seen fails with
// journal.ErrNotFound.
func unknownKeys(t *testing.T, h Harness) {
	e := open(t, h)
	calls := map[string]func() error{
		"get":     func() error { _, err := e.j.Get(e.ctx, "nope"); return err },
		"history": func() error { _, err := e.j.History(e.ctx, "nope"); return err },
		"send":    func() error { _, err := e.j.Send(e.ctx, "nope", "w"); return err },
		"record": func() error {
			_, err := e.j.Record(e.ctx, "nope", journal.Report{Worker: "w", To: journal.Applied})
			return err
		},
		"resolve": func() error {
			_, err := e.j.Resolve(e.ctx, "nope", journal.Resolution{To: journal.Applied, By: "a", Note: "n"})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, journal.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("%s of an unknown key: %v", name, err)
		}
	}
}

// start: Start records a new operation and sends it in one step, audited
// as two, and never sends it twice.
func start(t *testing.T, h Harness) {
	e := open(t, h)
	op, err := e.j.Start(e.ctx, journal.NewOperation{Key: "k", Kind: "call", Subject: "s"}, "w1")
	if err != nil || op.State != journal.Sending || op.Worker != "w1" || op.Attempts != 1 || op.LeaseExpires.IsZero() {
		t.Fatalf("start: %+v, %v", op, err)
	}
	hist, err := e.j.History(e.ctx, "k")
	if err != nil || len(hist) != 2 || hist[0].To != journal.Pending || hist[1].To != journal.Sending {
		t.Fatalf("history %+v, %v", hist, err)
	}
	// Started again, the operation is not sent twice.
	if _, err := e.j.Start(e.ctx, journal.NewOperation{Key: "k", Kind: "call", Subject: "s"}, "w1"); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("second start: %v", err)
	}
	if _, err := e.j.Start(e.ctx, journal.NewOperation{Key: "k", Kind: "other", Subject: "s"}, "w1"); !errors.Is(err, journal.ErrKeyConflict) {
		t.Fatalf("start of another operation under the key: %v", err)
	}
	if op, _ := e.j.Get(e.ctx, "k"); op.State != journal.Sending || op.Attempts != 1 {
		t.Fatalf("after refused starts: %+v", op)
	}
}

// annotate: the sender adds evidence to an operation while it is sending
// without moving it; once settled, the operation takes no more.
func annotate(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "k", journal.Sending)
	if err := e.j.Annotate(e.ctx, "k", "w1", journal.Evidence{"job_id": "j-1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.j.Annotate(e.ctx, "k", "w2", journal.Evidence{"job_id": "x"}); !errors.Is(err, journal.ErrLeaseLost) {
		t.Fatalf("annotation by another worker: %v", err)
	}
	op, _ := e.j.Get(e.ctx, "k")
	if op.State != journal.Sending || op.Evidence["job_id"] != "j-1" {
		t.Fatalf("after annotating: %+v", op)
	}
	hist, _ := e.j.History(e.ctx, "k")
	if len(hist) != 2 {
		t.Fatalf("an annotation is not a transition, yet the audit has %d entries", len(hist))
	}
	e.into(t, "done", journal.Applied)
	if err := e.j.Annotate(e.ctx, "done", "w1", journal.Evidence{"x": 1}); !errors.Is(err, journal.ErrIllegalTransition) {
		t.Fatalf("annotating an applied operation: %v", err)
	}
}
