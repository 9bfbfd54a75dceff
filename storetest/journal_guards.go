package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// guardCases are the cases of guards and replay keys: an open operation
// holds its guard against every journal sharing the store, and an applied
// one is found again by its replay key within a window, in the
// transaction that would have started the next.
func guardCases() []testCase {
	return []testCase{
		{name: "GuardHeldWhileOpen", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			start := func(key, guard string) (journal.Operation, error) {
				return e.j.Start(e.ctx, journal.NewOperation{Key: key, Kind: "call", Subject: "s", Guard: guard}, "w1")
			}
			held := func(key, guard, holder string, state journal.State) {
				t.Helper()
				_, err := start(key, guard)
				var ge *journal.GuardError
				if !errors.As(err, &ge) || !errors.Is(err, journal.ErrGuarded) || ge.Open.Key != holder || ge.Open.State != state || ge.Guard != guard {
					t.Fatalf("start %s with guard %s: %v; want a guard error naming %s, %s", key, guard, err, holder, state)
				}
				if _, err := e.j.Get(e.ctx, key); !errors.Is(err, journal.ErrNotFound) {
					t.Fatalf("a refused operation was recorded: %v", err)
				}
			}
			a, err := start("a", "g")
			if err != nil || a.State != journal.Sending || a.Guard != "g" {
				t.Fatalf("start a: %+v, %v", a, err)
			}
			held("b", "g", "a", journal.Sending)
			if _, err := start("other", "h"); err != nil {
				t.Fatalf("another guard: %v", err)
			}
			if _, err := start("unguarded", ""); err != nil {
				t.Fatalf("no guard: %v", err)
			}
			if _, err := e.j.Record(e.ctx, "a", journal.Report{Worker: "w1", To: journal.Ambiguous, Phase: "sent", Detail: "reset"}); err != nil {
				t.Fatal(err)
			}
			held("c", "g", "a", journal.Ambiguous)
			if _, err := e.j.Resolve(e.ctx, "a", journal.Resolution{To: journal.Applied, By: "ops", Note: "seen upstream"}); err != nil {
				t.Fatal(err)
			}
			if d, err := start("d", "g"); err != nil || d.State != journal.Sending {
				t.Fatalf("the guard outlived its holder: %+v, %v", d, err)
			}
			// A pending operation holds its guard too.
			if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "p1", Kind: "call", Guard: "p"}); err != nil {
				t.Fatal(err)
			}
			_, _, err = e.j.Insert(e.ctx, journal.NewOperation{Key: "p2", Kind: "call", Guard: "p"})
			if ge := (*journal.GuardError)(nil); !errors.As(err, &ge) || ge.Open.Key != "p1" {
				t.Fatalf("insert under a pending holder: %v", err)
			}
		}},
		{name: "GuardHoldsAcrossJournalsAtOnce", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			other := journal.New(e.s.JournalStore(), journal.Options{Lease: lease, Now: e.clock.Now})
			const n = 16
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				j := e.j
				if i%2 == 1 {
					j = other
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = j.Start(e.ctx, journal.NewOperation{Key: fmt.Sprintf("k%d", i), Kind: "call", Guard: "same"}, fmt.Sprintf("w%d", i))
				}()
			}
			wg.Wait()
			started := 0
			for i, err := range errs {
				switch {
				case err == nil:
					started++
				case !errors.Is(err, journal.ErrGuarded):
					t.Errorf("start k%d: %v; want started or guarded", i, err)
				}
			}
			if started != 1 {
				t.Fatalf("%d of %d operations with one guard started at once; want 1", started, n)
			}
		}},
		{name: "ReplayWithinWindow", run: func(t *testing.T, h Harness) {
			e := open(t, h)
			start := func(key string, within time.Duration) (journal.Operation, error) {
				return e.j.Start(e.ctx, journal.NewOperation{Key: key, Kind: "call", Replay: "r", ReplayWithin: within,
					Evidence: journal.Evidence{"n": key}}, "w1")
			}
			if _, err := start("a", time.Minute); err != nil {
				t.Fatal(err)
			}
			// Sending is no replay: the guard, if any, decides.
			if b, err := start("b", time.Minute); err != nil {
				t.Fatalf("an operation still sending was replayed: %+v, %v", b, err)
			}
			if _, err := e.j.Record(e.ctx, "a", journal.Report{Worker: "w1", To: journal.Applied, Evidence: journal.Evidence{"answer": "ok"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.j.Record(e.ctx, "b", journal.Report{Worker: "w1", To: journal.NotApplied, Detail: "refused"}); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(30 * time.Second)
			_, err := start("c", time.Minute)
			var re *journal.ReplayError
			if !errors.As(err, &re) || !errors.Is(err, journal.ErrReplayed) || re.Applied.Key != "a" || re.Applied.Evidence["answer"] != "ok" || re.Replay != "r" {
				t.Fatalf("start within the window: %v; want a replay of a with its evidence", err)
			}
			if _, err := e.j.Get(e.ctx, "c"); !errors.Is(err, journal.ErrNotFound) {
				t.Fatalf("a replayed operation was recorded: %v", err)
			}
			if _, err := start("d", 0); err != nil {
				t.Fatalf("a window of 0 replayed: %v", err)
			}
			e.clock.Advance(31 * time.Second)
			if _, err := start("e", time.Minute); err != nil {
				t.Fatalf("start after the window: %v", err)
			}
			if _, err := e.j.Start(e.ctx, journal.NewOperation{Key: "f", Kind: "call", ReplayWithin: -time.Second}, "w1"); !errors.Is(err, journal.ErrInvalid) {
				t.Fatalf("a negative window: %v", err)
			}
		}},
	}
}
