package journal

import (
	"context"
	"errors"
)

// AuditFilter selects entries of the audit log. Empty fields select
// everything.
type AuditFilter struct {
	// Kind selects the entries of operations of this kind.
	Kind string
	// Before selects the entries older than the entry with this ID, to
	// read the log page by page; 0 starts from the newest.
	Before int64
	// Limit caps the number returned; 0 means 100.
	Limit int
}

// AuditReader is implemented by a [Tx] that can read the audit log across
// operations, newest first. A store whose transactions do not implement it
// keeps the log readable one operation at a time ([Journal.History]).
type AuditReader interface {
	// AuditEntries returns the entries that f selects, newest first; f's
	// Limit is set.
	AuditEntries(ctx context.Context, f AuditFilter) ([]Entry, error)
}

// ErrNoAuditLog is returned by [Journal.Audit] when the store cannot read
// the audit log across operations.
var ErrNoAuditLog = errors.New("this store reads the audit log one operation at a time only")

// Audit returns the entries of the audit log that f selects, newest first:
// who moved which operation from which state to which, when and why.
func (j *Journal) Audit(ctx context.Context, f AuditFilter) (entries []Entry, err error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	err = j.store.View(ctx, func(tx Tx) error {
		r, ok := tx.(AuditReader)
		if !ok {
			return ErrNoAuditLog
		}
		entries, err = r.AuditEntries(ctx, f)
		return err
	})
	return entries, err
}
