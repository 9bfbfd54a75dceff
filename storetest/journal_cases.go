package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

func needsRewriteAudit(h Harness) string {
	if h.RewriteAudit == nil {
		return "RewriteAudit"
	}
	return ""
}

// journalCases are the journal's cases: the state machine, its audit log,
// leases, claims and recovery.
func journalCases() []testCase {
	return []testCase{
		{name: "HappyPathIsAudited", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "InsertIsIdempotentPerKey", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "EveryTransition", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "Leases", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			e.insert(t, "a")
			e.claim(t, "a", "w1")
			if ops, err := e.j.Claim(e.ctx, "charge", "w2", 10); err != nil || len(ops) != 0 {
				t.Fatalf("claim of a held operation by w2: %d, %v", len(ops), err)
			}
			if _, err := e.j.Send(e.ctx, "a", "w2"); !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), `"w1"`) {
				t.Fatalf("send by a worker without the lease: %v", err)
			}
			e.clock.Advance(lease / 2)
			if err := e.j.Renew(e.ctx, "w1", "a"); err != nil {
				t.Fatalf("renew: %v", err)
			}
			e.clock.Advance(lease * 3 / 4) // past the first lease, within the renewed one
			if _, err := e.j.Send(e.ctx, "a", "w1"); err != nil {
				t.Fatalf("send within the renewed lease: %v", err)
			}

			// A pending claim whose worker died is claimable again.
			e.insert(t, "b")
			e.claim(t, "b", "w1")
			e.clock.Advance(lease + time.Second)
			if _, err := e.j.Send(e.ctx, "b", "w1"); !errors.Is(err, journal.ErrLeaseLost) || !strings.Contains(err.Error(), "ran out") {
				t.Fatalf("send after the lease ran out: %v", err)
			}
			if err := e.j.Renew(e.ctx, "w1", "b"); !errors.Is(err, journal.ErrLeaseLost) {
				t.Fatalf("renew after the lease ran out: %v", err)
			}
			e.claim(t, "b", "w2")
			if _, err := e.j.Send(e.ctx, "b", "w2"); err != nil {
				t.Fatalf("send by the new holder: %v", err)
			}
		}},
		{name: "RecoverMakesAbandonedSendsAmbiguous", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			e.into(t, "sent-then-died", journal.Sending)
			e.into(t, "claimed-then-died", journal.Pending)
			e.claim(t, "claimed-then-died", "w9")
			if got, err := e.j.Recover(e.ctx); err != nil || len(got) != 0 {
				t.Fatalf("recover before any lease ran out: %d, %v", len(got), err)
			}
			e.clock.Advance(lease + time.Second)
			got, err := e.j.Recover(e.ctx)
			if err != nil || len(got) != 1 || got[0].Key != "sent-then-died" || got[0].State != journal.Ambiguous {
				t.Fatalf("recover: %+v, %v", got, err)
			}
			op, _ := e.j.Get(e.ctx, "sent-then-died")
			if op.State != journal.Ambiguous || op.LastPhase != "sent" || !strings.Contains(op.LastError, "w1") {
				t.Fatalf("recovered operation: %+v", op)
			}
			hist, _ := e.j.History(e.ctx, "sent-then-died")
			if last := hist[len(hist)-1]; last.Actor != "recovery" || last.To != journal.Ambiguous {
				t.Fatalf("recovery's audit entry: %+v", last)
			}
			// Never handed out again; the abandoned claim is.
			ops, err := e.j.Claim(e.ctx, "charge", "w2", 10)
			if err != nil || len(ops) != 1 || ops[0].Key != "claimed-then-died" {
				t.Fatalf("claim after recovery: %+v, %v", ops, err)
			}
			// Another worker's report on it is refused; its sender's answer
			// is kept (see LateAnswerIsKept).
			if _, err := e.j.Record(e.ctx, "sent-then-died", journal.Report{Worker: "w2", To: journal.Applied}); !errors.Is(err, journal.ErrIllegalTransition) {
				t.Fatalf("another worker's report on a recovered operation: %v", err)
			}
		}},
		{name: "RetrySafeNeverTouchesAmbiguous", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "ResolveRecordsWhoWhenWhy", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "UnknownKeys", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "AuditLogIsAppendOnly", needs: needsRewriteAudit, run: func(t *testing.T, h Harness) {
			e := open(t, h)
			e.into(t, "k", journal.Applied)
			update, remove := h.RewriteAudit(t, e.s)
			if update == nil || remove == nil {
				t.Errorf("rewriting the audit log behind the journal: update %v, delete %v; want both refused", update, remove)
			}
			// recorded, sending, applied
			if hist, _ := e.j.History(e.ctx, "k"); len(hist) != 3 || hist[0].Reason != "recorded" {
				t.Fatalf("audit after the attempts: %+v, want the 3 entries unchanged", hist)
			}
		}},
		{name: "ClaimsNeverOverlap", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			const n = 60
			for i := range n {
				e.insert(t, fmt.Sprintf("q-%02d", i))
			}
			claimed := make(chan string, n*2)
			done := make(chan error)
			for w := range 6 {
				go func() {
					for {
						ops, err := e.j.Claim(context.Background(), "charge", fmt.Sprintf("w%d", w), 3)
						if err != nil || len(ops) == 0 {
							done <- err
							return
						}
						for _, op := range ops {
							claimed <- op.Key
						}
					}
				}()
			}
			for range 6 {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			close(claimed)
			seen := map[string]bool{}
			for k := range claimed {
				if seen[k] {
					t.Fatalf("%s claimed twice", k)
				}
				seen[k] = true
			}
			if len(seen) != n {
				t.Fatalf("%d of %d operations claimed", len(seen), n)
			}
		}},
		{name: "ListFilters", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			e.into(t, "a_1", journal.Applied)
			e.into(t, "a%2", journal.Ambiguous)
			e.into(t, "b-1", journal.Pending)
			ops, err := e.j.List(e.ctx, journal.Filter{Kind: "charge", SubjectPrefix: "batch/a%", States: []journal.State{journal.Ambiguous, journal.Applied}})
			if err != nil || len(ops) != 1 || ops[0].Key != "a%2" {
				t.Fatalf("list by literal prefix batch/a%%: %+v, %v", ops, err)
			}
			ops, _ = e.j.List(e.ctx, journal.Filter{Limit: 2})
			if len(ops) != 2 {
				t.Fatalf("limit 2 gave %d", len(ops))
			}
		}},
		{name: "ListByKeys", run: listByKeys},
		{name: "KeepLeasesOutlastsTheLease", run: func(t *testing.T, h Harness) {
			ctx := context.Background()
			const short = 450 * time.Millisecond
			j := journal.New(h.Open(t, time.Now).JournalStore(), journal.Options{Lease: short}) // the real clock
			for _, k := range []string{"kept", "not-kept"} {
				j.Insert(ctx, journal.NewOperation{Key: k, Kind: "upload"})
			}
			if ops, err := j.Claim(ctx, "upload", "w1", 2); err != nil || len(ops) != 2 {
				t.Fatalf("claim: %d, %v", len(ops), err)
			}
			_, stop := j.KeepLeases(ctx, "w1", "kept")
			time.Sleep(3 * short)
			if _, err := j.Send(ctx, "kept", "w1"); err != nil {
				t.Fatalf("send after three lease durations with the keeper: %v", err)
			}
			if _, err := j.Send(ctx, "not-kept", "w1"); !errors.Is(err, journal.ErrLeaseLost) {
				t.Fatalf("send after three lease durations without the keeper: %v", err)
			}
			// The keeper goes on renewing the sending lease; stopping reports
			// no failure.
			time.Sleep(2 * short)
			if err := stop(); err != nil {
				t.Fatalf("stop: %v", err)
			}
			if got, err := j.Recover(ctx); err != nil || len(got) != 0 {
				t.Fatalf("recover found %d kept operations expired: %v", len(got), err)
			}
			// A keeper on a lease that is gone reports it.
			_, stop = j.KeepLeases(ctx, "w1", "not-kept")
			time.Sleep(short)
			if err := stop(); !errors.Is(err, journal.ErrLeaseLost) {
				t.Fatalf("keeper of a lost lease: %v", err)
			}
		}},
		{name: "ClaimKey", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			e.insert(t, "k")
			if op, err := e.j.ClaimKey(e.ctx, "k", "w1"); err != nil || op.Worker != "w1" || op.LeaseExpires.IsZero() {
				t.Fatalf("claim: %+v, %v", op, err)
			}
			if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); !errors.Is(err, journal.ErrLeaseLost) {
				t.Fatalf("claim of a held operation: %v", err)
			}
			if _, err := e.j.ClaimKey(e.ctx, "k", "w1"); err != nil {
				t.Fatalf("the holder claims again: %v", err)
			}
			e.clock.Advance(lease + time.Second)
			if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); err != nil {
				t.Fatalf("claim after the lease ran out: %v", err)
			}
			if _, err := e.j.Send(e.ctx, "k", "w2"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.j.ClaimKey(e.ctx, "k", "w2"); !errors.Is(err, journal.ErrIllegalTransition) {
				t.Fatalf("claim of a sending operation: %v", err)
			}
			if _, err := e.j.ClaimKey(e.ctx, "missing", "w2"); !errors.Is(err, journal.ErrNotFound) {
				t.Fatalf("claim of an unknown key: %v", err)
			}
		}},
		{name: "Start", run: func(t *testing.T, h Harness) {
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
		}},
		{name: "Annotate", run: func(t *testing.T, h Harness) {
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
		}},
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

// TestEveryTransition drives an operation into each state and tries every
// action on it: the legal ones move it where the state machine says, the
// others fail with an error and change nothing, audit log included.
// TestHoldAndSendCommitTogether: a hold and the sending transition made in
// one transaction both happen, or neither does.

// listByKeys: a filter by keys selects exactly the operations with those
// keys, however many keys it names, with the other fields narrowing it, and
// a safe retry's scope narrows the same way.
func listByKeys(t *testing.T, h Harness) {
	e := open(t, h)
	odd := []string{"k%1", "k_2", "k'3", "ké 4 日本"}
	for _, k := range odd {
		e.into(t, k, journal.FailedSafe)
	}
	e.into(t, "k-ambiguous", journal.Ambiguous)
	keys := func(ops []journal.Operation) string {
		var out []string
		for _, op := range ops {
			out = append(out, op.Key)
		}
		return strings.Join(out, ",")
	}
	// Thousands of keys, most without an operation: a store that binds a
	// parameter per key meets its backend's limit.
	many := []string{"k'3", "k-ambiguous", "k%1"}
	for i := range 5000 {
		many = append(many, fmt.Sprintf("missing-%d", i))
	}
	ops, err := e.j.List(e.ctx, journal.Filter{Keys: many})
	if err != nil || keys(ops) != "k%1,k'3,k-ambiguous" {
		t.Fatalf("list by 5003 keys, 3 of them stored: %q, %v; want k%%1,k'3,k-ambiguous, oldest first", keys(ops), err)
	}
	ops, err = e.j.List(e.ctx, journal.Filter{Keys: many, States: []journal.State{journal.Ambiguous}})
	if err != nil || keys(ops) != "k-ambiguous" {
		t.Fatalf("list by keys and state: %q, %v", keys(ops), err)
	}
	if ops, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"k_2", "ké 4 日本"}, Kind: "refund"}); err != nil || len(ops) != 0 {
		t.Fatalf("list by keys of another kind: %q, %v", keys(ops), err)
	}
	if ops, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"ké 4 日本", "k_2"}}); err != nil || keys(ops) != "k_2,ké 4 日本" {
		t.Fatalf("list by keys with _ and non-ASCII letters: %q, %v", keys(ops), err)
	}
	if _, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"ok", " "}}); !errors.Is(err, journal.ErrInvalid) {
		t.Fatalf("list by a blank key: %v; want ErrInvalid", err)
	}
	rep, err := e.j.RetrySafe(e.ctx, journal.Scope{Keys: []string{"k_2", "k-ambiguous", "missing"}, By: "ana"})
	if err != nil || strings.Join(rep.Moved, ",") != "k_2" || len(rep.Left) != 1 || rep.Left[0].Key != "k-ambiguous" {
		t.Fatalf("a safe retry of keys: %+v, %v; want k_2 moved and k-ambiguous left", rep, err)
	}
	if op, _ := e.j.Get(e.ctx, "k%1"); op.State != journal.FailedSafe {
		t.Fatalf("an operation outside the keys moved to %s", op.State)
	}
}
