package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Operations returns the journal operations of the chunks of the batch's
// contents, by key.
func (s *Store) Operations(ctx context.Context, batch string) ([]journal.Operation, error) {
	keys, err := s.texts(ctx, `SELECT DISTINCT c.op_key FROM recall_chunks c
		JOIN recall_items i ON i.sha256 = c.sha256 WHERE i.batch = $1 ORDER BY c.op_key`, batch)
	if err != nil || len(keys) == 0 {
		return []journal.Operation{}, err // an empty filter would select every operation
	}
	ops, err := s.j.List(ctx, journal.Filter{Keys: keys})
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]journal.Operation, len(ops))
	for _, op := range ops {
		byKey[op.Key] = op
	}
	out := make([]journal.Operation, 0, len(keys))
	for _, k := range keys {
		if op, ok := byKey[k]; ok {
			out = append(out, op)
		}
	}
	return out, nil
}

// Request is an ambiguous request with what is known of it.
type Request struct {
	journal.Operation
	// SHA256 names the content of the request's chunk, and Paths the files
	// that hold it.
	SHA256 string
	Paths  []string
	// Batches are the batches that hold those files.
	Batches []string
	// SentAt is when the request was committed as sent.
	SentAt time.Time
	// Held is what its open hold reserves.
	Held ledger.Amount
}

// Ambiguous returns the ambiguous requests for the contents of batch, or
// of every batch when batch is empty, oldest first.
func (s *Store) Ambiguous(ctx context.Context, batch string) ([]Request, error) {
	ops, err := s.j.List(ctx, journal.Filter{Kind: Kind, States: []journal.State{journal.Ambiguous}})
	if err != nil {
		return nil, err
	}
	out := []Request{}
	for _, op := range ops {
		r := Request{Operation: op}
		r.SHA256, _, _ = strings.Cut(op.Subject, "/")
		if r.Paths, err = s.Paths(ctx, batch, r.SHA256); err != nil {
			return nil, err
		}
		if batch != "" && len(r.Paths) == 0 {
			continue
		}
		if r.Batches, err = s.texts(ctx, `SELECT DISTINCT batch FROM recall_items WHERE sha256 = $1 AND ($2 = '' OR batch = $2) ORDER BY 1`, r.SHA256, batch); err != nil {
			return nil, err
		}
		if r.SentAt, err = s.sentAt(ctx, op.Key); err != nil {
			return nil, err
		}
		holds, err := s.l.Holds(ctx, ledger.HoldFilter{Operation: op.Key, States: []ledger.HoldState{ledger.Held}})
		if err != nil {
			return nil, err
		}
		for _, h := range holds {
			r.Held += h.Amount
		}
		out = append(out, r)
	}
	return out, nil
}

// sentAt returns when the request key was last committed as sent.
func (s *Store) sentAt(ctx context.Context, key string) (time.Time, error) {
	hist, err := s.j.History(ctx, key)
	var at time.Time
	for _, e := range hist {
		if e.To == journal.Sending {
			at = e.At
		}
	}
	return at, err
}

// RetrySafe moves the requests of the batch's contents that provably had
// no effect back to pending, and reports the others, as
// journal.Journal.RetrySafe does; by names who asked.
func (s *Store) RetrySafe(ctx context.Context, batch, by string) (journal.RetryReport, error) {
	keys, err := s.texts(ctx, `SELECT DISTINCT c.op_key FROM recall_chunks c
		JOIN recall_items i ON i.sha256 = c.sha256 WHERE i.batch = $1 AND i.state = $2`, batch, recording.Added)
	if err != nil || len(keys) == 0 {
		return journal.RetryReport{}, err // an empty scope would be every operation
	}
	return s.j.RetrySafe(ctx, journal.Scope{Kind: Kind, Keys: keys, By: by})
}

// Resolution is a person's decision on an ambiguous request, or a
// reconciliation's.
type Resolution struct {
	journal.Resolution
	// Cost is what the provider charged for an applied request; 0 keeps
	// the amount held.
	Cost ledger.Amount
	// Transcript, for an applied request, is the text obtained from the
	// provider, if any.
	Transcript *recording.Transcript
}

// Resolve records the decision on the ambiguous request key, in one
// transaction: applied settles its hold (and stores the transcript, if
// given); not applied releases the hold, and the request may be retried.
func (s *Store) Resolve(ctx context.Context, key string, res Resolution) (journal.Operation, error) {
	var op journal.Operation
	err := s.update(ctx, named("resolving "+key), func(tx *sqlstore.Tx) error {
		var err error
		if op, err = s.j.ResolveTx(ctx, tx, key, res.Resolution); err != nil {
			return err
		}
		if res.To != journal.Applied {
			return s.release(ctx, tx, key)
		}
		h, held, err := s.heldFor(ctx, tx, key)
		if err != nil {
			return err
		}
		cost := res.Cost
		if cost == 0 {
			cost = h.Amount
		}
		if held {
			if _, err := s.l.SettleTx(ctx, tx, h.ID, cost); err != nil {
				return err
			}
			if err := s.refit(ctx, tx, h); err != nil {
				return err
			}
		}
		if res.Transcript == nil {
			return nil
		}
		c, err := chunkOf(ctx, tx, op)
		if err != nil {
			return err
		}
		return putTranscript(ctx, tx, c, Transcript{Transcript: *res.Transcript, Provider: c.Provider, Model: c.Model, Cost: cost}, s.now())
	})
	return op, err
}

// chunkOf returns the chunk that op pays for.
func chunkOf(ctx context.Context, tx *sqlstore.Tx, op journal.Operation) (Chunk, error) {
	c := Chunk{Key: op.Key}
	var start, dur int64
	err := tx.SQL().QueryRowContext(ctx, `SELECT sha256, provider, model, settings, idx, count, start_us, duration_us FROM recall_chunks WHERE op_key = $1`, op.Key).
		Scan(&c.SHA256, &c.Provider, &c.Model, &c.Settings, &c.Index, &c.Count, &start, &dur)
	c.Start, c.Duration = fromMicros(start), fromMicros(dur)
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("store: operation %s pays for no chunk of the archive", op.Key)
	}
	return c, err
}
