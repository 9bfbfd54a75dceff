package sqlstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
)

// hiddenAudit is a store whose transactions cannot read the log across
// operations.
type hiddenAudit struct{ journal.Store }

func (s hiddenAudit) View(ctx context.Context, fn func(journal.Tx) error) error {
	return s.Store.View(ctx, func(tx journal.Tx) error { return fn(struct{ journal.Tx }{tx}) })
}

func TestAuditNeedsAReader(t *testing.T) {
	t.Parallel()
	e := open(t, backends()[0])
	j := journal.New(hiddenAudit{e.db.JournalStore()}, journal.Options{})
	if _, err := j.Audit(e.ctx, journal.AuditFilter{}); !errors.Is(err, journal.ErrNoAuditLog) {
		t.Fatalf("a store without the log across operations: %v", err)
	}
}
