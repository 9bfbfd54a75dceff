package store

import (
	"context"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// TestEarlierPlayMoneyLeavesTheBudget opens an archive of schema 5, whose
// batch with a budget of $0.003 paid the sandbox $0.0023 of play money on
// its budget's account, as earlier versions did: once opened, the budget
// is still $0.003, nothing of it is spent, the play money is shown apart,
// and a real request of the whole budget fits; a new sandbox request is
// held on the play account and leaves the budget alone.
func TestEarlierPlayMoneyLeavesTheBudget(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			old := earlierArchive(t, dsn, 5,
				`INSERT INTO recall_batches (name, created_at) VALUES ('b', 1)`,
				`INSERT INTO recall_contents (sha256, size, duration_us, probed, added_at) VALUES ('aa', 8000, 2000000, 1, 1)`,
				`INSERT INTO recall_items (batch, path, sha256, state, added_at, updated_at) VALUES ('b', '/rec/a.mp3', 'aa', 'added', 1, 1)`,
				`INSERT INTO recall_chunks (sha256, provider, model, idx, count, start_us, duration_us, op_key, planned_at) VALUES ('aa', 'sandbox', 'whisper-1', 0, 1, 0, 2000000, 'transcribe/aa/0/sandbox/whisper-1', 1)`,
				`INSERT INTO recall_chunks (sha256, provider, model, idx, count, start_us, duration_us, op_key, planned_at) VALUES ('aa', 'openai', 'whisper-1', 0, 1, 0, 2000000, 'transcribe/aa/0/openai/whisper-1', 2)`)
			l := ledger.New(old.LedgerStore(), nil)
			if _, err := l.Open(ctx, account("b"), unit, 3000); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Hold(ctx, ledger.HoldRequest{ID: "transcribe/aa/0/sandbox/whisper-1#0", Account: account("b"), Amount: 2300, Operation: "transcribe/aa/0/sandbox/whisper-1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Settle(ctx, "transcribe/aa/0/sandbox/whisper-1#0", 2300); err != nil {
				t.Fatal(err)
			}
			old.Close()

			s, err := Open(ctx, dsn, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			m, err := s.Money(ctx, "b")
			if err != nil || m.Budget != 3000 || m.Spent != 0 || m.Play.Spent != 2300 {
				t.Fatalf("money after the upgrade: %+v, %v; want the budget whole and the play money apart", m, err)
			}
			for _, key := range []string{"transcribe/aa/0/openai/whisper-1", "transcribe/aa/0/sandbox/whisper-1"} {
				if _, _, err := s.j.Insert(ctx, journal.NewOperation{Key: key, Kind: Kind, Subject: key}); err != nil {
					t.Fatal(err)
				}
			}
			_, release, err := s.Claim(ctx, "transcribe/aa/0/openai/whisper-1", "w1")
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if _, err := s.Send(ctx, "b", "transcribe/aa/0/openai/whisper-1", "w1", 3000); err != nil {
				t.Fatalf("a real request of the whole budget: %v", err)
			}
			// A budget changed now is the budget, whatever the limit carries.
			if c, err := s.SetBudget(ctx, "b", 5000, "t", "test"); err != nil || c.Old != 3000 {
				t.Fatalf("budget change: %+v, %v", c, err)
			}
			if m, _ := s.Money(ctx, "b"); m.Budget != 5000 || m.Held != 3000 {
				t.Fatalf("money: %+v", m)
			}
			if _, err := s.j.ClaimKey(ctx, "transcribe/aa/0/sandbox/whisper-1", "w1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Send(ctx, "b", "transcribe/aa/0/sandbox/whisper-1", "w1", 1_000_000); err != nil {
				t.Fatalf("a sandbox request larger than the budget: %v; play money has no budget", err)
			}
			if m, _ := s.Money(ctx, "b"); m.Held != 3000 || m.Play.Held != 1_000_000 || len(m.Providers) != 2 {
				t.Fatalf("money with a sandbox request in flight: %+v", m)
			}
		})
	}
}
