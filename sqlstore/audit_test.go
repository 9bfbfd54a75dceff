package sqlstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
)

// TestAuditAcrossOperations reads the audit log across operations, newest
// first, by kind and page by page.
func TestAuditAcrossOperations(t *testing.T) {
	forEach(t, func(t *testing.T, b backend) {
		e := open(t, b)
		e.into(t, "c1", journal.Applied)   // charge: 3 entries
		e.into(t, "c2", journal.Ambiguous) // charge: 3 entries
		if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "r1", Kind: "refund"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.j.Resolve(e.ctx, "c2", journal.Resolution{To: journal.NotApplied, By: "ana", Note: "not in the dashboard"}); err != nil {
			t.Fatal(err)
		}
		all, err := e.j.Audit(e.ctx, journal.AuditFilter{})
		if err != nil || len(all) != 8 {
			t.Fatalf("the whole log: %d entries, %v; want 8", len(all), err)
		}
		for i := 1; i < len(all); i++ {
			if all[i].ID >= all[i-1].ID {
				t.Fatalf("not newest first: entry %d after %d", all[i].ID, all[i-1].ID)
			}
		}
		if last := all[0]; last.Key != "c2" || last.From != journal.Ambiguous || last.To != journal.NotApplied || last.Actor != "ana" ||
			last.Reason != "resolved: not in the dashboard" || last.At.IsZero() {
			t.Fatalf("the newest entry: %+v", last)
		}
		charges, err := e.j.Audit(e.ctx, journal.AuditFilter{Kind: "charge"})
		if err != nil || len(charges) != 7 {
			t.Fatalf("charges: %d entries, %v; want 7", len(charges), err)
		}
		for _, en := range charges {
			if en.Key == "r1" {
				t.Fatalf("a refund's entry among the charges: %+v", en)
			}
		}
		page1, err := e.j.Audit(e.ctx, journal.AuditFilter{Kind: "charge", Limit: 4})
		if err != nil || len(page1) != 4 || page1[0].ID != charges[0].ID {
			t.Fatalf("first page: %d entries, %v", len(page1), err)
		}
		page2, err := e.j.Audit(e.ctx, journal.AuditFilter{Kind: "charge", Limit: 4, Before: page1[3].ID})
		if err != nil || len(page2) != 3 || page2[0].ID != charges[4].ID || page2[2].ID != charges[6].ID {
			t.Fatalf("second page: %+v, %v; want the last 3 charges", page2, err)
		}
	})
}

// hiddenAudit is a store whose transactions cannot read the log across
// operations.
type hiddenAudit struct{ journal.Store }

func (s hiddenAudit) View(ctx context.Context, fn func(journal.Tx) error) error {
	return s.Store.View(ctx, func(tx journal.Tx) error { return fn(struct{ journal.Tx }{tx}) })
}

func TestAuditNeedsAReader(t *testing.T) {
	e := open(t, backends()[0])
	j := journal.New(hiddenAudit{e.db.JournalStore()}, journal.Options{})
	if _, err := j.Audit(e.ctx, journal.AuditFilter{}); !errors.Is(err, journal.ErrNoAuditLog) {
		t.Fatalf("a store without the log across operations: %v", err)
	}
}
