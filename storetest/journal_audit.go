package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// auditCases are the cases of the audit log: append-only where the store
// keeps it so, and read across operations (journal.Journal.Audit) where the
// store offers it (journal.AuditReader).
func auditCases() []testCase {
	return []testCase{
		{name: "AuditLogIsAppendOnly", needs: needsRewriteAudit, run: auditLogIsAppendOnly},
		{name: "AuditLogAcrossOperations", run: auditAcrossOperations},
	}
}

func needsRewriteAudit(h Harness) string {
	if h.RewriteAudit == nil {
		return "RewriteAudit"
	}
	return ""
}

// auditLogIsAppendOnly: the store refuses to change or delete its audit log.
func auditLogIsAppendOnly(t *testing.T, h Harness) {
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
}

// auditAcrossOperations: the audit log read across operations, newest
// first, by kind and page by page, where the store offers it.
func auditAcrossOperations(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "c1", journal.Applied)   // charge: 3 entries
	e.into(t, "c2", journal.Ambiguous) // charge: 3 entries
	if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "r1", Kind: "refund"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(lease + time.Second) // the lease c2 was sent under is over
	if _, err := e.j.Resolve(e.ctx, "c2", journal.Resolution{To: journal.NotApplied, By: "ana", Note: "not in the dashboard"}); err != nil {
		t.Fatal(err)
	}
	all, err := e.j.Audit(e.ctx, journal.AuditFilter{})
	if errors.Is(err, journal.ErrNoAuditLog) {
		t.Skip("the store does not read its audit log across operations (journal.AuditReader)")
	}
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
}
