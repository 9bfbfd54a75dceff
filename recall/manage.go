package recall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Estimate is what a batch costs.
type Estimate struct {
	Batch    string        `json:"batch"`
	Contents int           `json:"contents"`
	Duration time.Duration `json:"duration_ns"`
	Cost     ledger.Amount `json:"cost_micro_usd"`
	// Remaining and RemainingCost leave out the contents already
	// transcribed.
	Remaining     time.Duration `json:"remaining_ns"`
	RemainingCost ledger.Amount `json:"remaining_cost_micro_usd"`
}

// Estimate prices the batch's distinct contents at pricePerMinute
// (micro-dollars), billed per started second of each content.
func (a *Archive) Estimate(ctx context.Context, batch string, pricePerMinute ledger.Amount) (Estimate, error) {
	est := Estimate{Batch: batch}
	if _, err := a.Status(ctx, batch); err != nil {
		return est, err
	}
	states, err := a.contentStates(ctx, batch)
	if err != nil {
		return est, err
	}
	err = a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, `SELECT DISTINCT c.sha256, c.duration_us FROM recall_contents c
			JOIN recall_items i ON i.sha256 = c.sha256 WHERE i.batch = $1 AND i.state = 'added'`, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sha string
			var us int64
			if err := rows.Scan(&sha, &us); err != nil {
				return err
			}
			d := time.Duration(us) * time.Microsecond
			cost := priceOf(d, pricePerMinute)
			est.Contents++
			est.Duration += d
			est.Cost += cost
			if states[sha] != contentDone {
				est.Remaining += d
				est.RemainingCost += cost
			}
		}
		return rows.Err()
	})
	return est, err
}

// priceOf is the cost of d at perMinute, billed per started second.
func priceOf(d time.Duration, perMinute ledger.Amount) ledger.Amount {
	secs := int64((d + time.Second - 1) / time.Second)
	return ledger.Amount((secs*int64(perMinute) + 59) / 60)
}

// RetryReport says what RetryFailed moved and what it left.
type RetryReport struct {
	Batch string `json:"batch"`
	// Items counts files that failed before payment and go back to the
	// queue; Requests counts chunk requests proven not applied.
	Items    int            `json:"items"`
	Requests int            `json:"requests"`
	Left     []journal.Left `json:"left"`
}

// RetryFailed puts back in the queue every failure of batch known to be
// before the paid boundary: files whose probing, reading or proxy failed,
// and requests that were not sent or that the provider refused without
// charging. It never touches an ambiguous request; those it reports, with
// why, among the ones it left.
func (a *Archive) RetryFailed(ctx context.Context, batch string) (RetryReport, error) {
	rep := RetryReport{Batch: batch, Left: []journal.Left{}}
	if _, err := a.Status(ctx, batch); err != nil {
		return rep, err
	}
	// Files: probe and hash again, as add does.
	var again []string
	var proxyFailed int
	err := a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, `SELECT path, phase FROM recall_items WHERE batch = $1 AND state = 'failed'`, batch)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p, phase string
			if err := rows.Scan(&p, &phase); err != nil {
				rows.Close()
				return err
			}
			if phase == "proxy" {
				proxyFailed++
			} else {
				again = append(again, p)
			}
		}
		rows.Close()
		_, err = tx.SQL().ExecContext(ctx, `UPDATE recall_items SET state = 'added', phase = '', error = '', updated_at = $2
			WHERE batch = $1 AND state = 'failed' AND phase = 'proxy'`, batch, a.now().UnixMicro())
		return err
	})
	if err != nil {
		return rep, err
	}
	rep.Items = proxyFailed
	if len(again) > 0 {
		add, err := a.Add(ctx, batch, again, AddOptions{})
		if err != nil {
			return rep, err
		}
		rep.Items += add.Added + add.Unchanged
	}
	// Requests: the journal moves only what provably had no effect.
	contents, err := a.contentsToRun(ctx, batch)
	if err != nil {
		return rep, err
	}
	j := journal.New(a.db.JournalStore(), journal.Options{Now: a.now})
	for _, sha := range contents {
		r, err := j.RetrySafe(ctx, journal.Scope{Kind: opKind, SubjectPrefix: sha + "/", By: "retry-failed --safe-only"})
		if err != nil {
			return rep, err
		}
		rep.Requests += len(r.Moved)
		for _, l := range r.Left {
			if l.State == journal.Ambiguous || l.State == journal.Sending {
				rep.Left = append(rep.Left, l)
			}
		}
	}
	return rep, nil
}

// AmbiguousItem is a request whose outcome is unknown, with what is known.
type AmbiguousItem struct {
	Key   string   `json:"key"`
	Paths []string `json:"paths"`
	// SentAt is when the request was committed as sent.
	SentAt   time.Time        `json:"sent_at"`
	Attempt  int              `json:"attempt"`
	Detail   string           `json:"detail"`
	Evidence journal.Evidence `json:"evidence"`
	Held     ledger.Amount    `json:"held_micro_usd"`
}

// Ambiguous lists the ambiguous requests of batch, or of every batch when
// batch is empty.
func (a *Archive) Ambiguous(ctx context.Context, batch string) ([]AmbiguousItem, error) {
	j := journal.New(a.db.JournalStore(), journal.Options{Now: a.now})
	ops, err := j.List(ctx, journal.Filter{Kind: opKind, States: []journal.State{journal.Ambiguous}})
	if err != nil {
		return nil, err
	}
	out := []AmbiguousItem{}
	for _, op := range ops {
		sha, _, _ := strings.Cut(op.Subject, "/")
		paths, err := a.pathsOf(ctx, batch, sha)
		if err != nil {
			return nil, err
		}
		if batch != "" && len(paths) == 0 {
			continue
		}
		item := AmbiguousItem{Key: op.Key, Paths: paths, Attempt: op.Attempts, Detail: op.LastError, Evidence: op.Evidence}
		hist, err := j.History(ctx, op.Key)
		if err != nil {
			return nil, err
		}
		for _, e := range hist {
			if e.To == journal.Sending {
				item.SentAt = e.At
			}
		}
		err = a.db.View(ctx, func(tx *sqlstore.Tx) error {
			h, err := tx.LockHold(ctx, holdID(op.Key, op.Attempts))
			if err == nil && h.State == ledger.Held {
				item.Held = h.Amount
			}
			if errors.Is(err, ledger.ErrNoHold) {
				return nil
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

// pathsOf returns the paths of sha in batch (every batch if empty).
func (a *Archive) pathsOf(ctx context.Context, batch, sha string) ([]string, error) {
	return a.texts(ctx, `SELECT DISTINCT path FROM recall_items WHERE sha256 = $1 AND ($2 = '' OR batch = $2) ORDER BY path`, sha, batch)
}

// Decision is a person's resolution of an ambiguous request.
type Decision struct {
	// Applied is true when the provider did transcribe (and charge).
	Applied bool
	// Transcript is the text obtained from the provider, if any, for an
	// applied request.
	Transcript *provider.Transcript
	// Cost is what the provider charged, for an applied request; 0 keeps
	// the estimate that was held.
	Cost ledger.Amount
	By   string
	Note string
	// Evidence backs the decision.
	Evidence journal.Evidence
}

// Resolve records a decision on the ambiguous request key: applied settles
// its hold (and stores the transcript, if given); not applied releases the
// hold and makes the request eligible for retry-failed.
func (a *Archive) Resolve(ctx context.Context, key string, d Decision) (journal.Operation, error) {
	j := journal.New(a.db.JournalStore(), journal.Options{Now: a.now})
	l := ledger.New(a.db.LedgerStore(), a.now)
	to := journal.NotApplied
	if d.Applied {
		to = journal.Applied
	}
	var op journal.Operation
	err := a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		var err error
		op, err = j.ResolveTx(ctx, tx, key, journal.Resolution{To: to, By: d.By, Note: d.Note, Evidence: d.Evidence})
		if err != nil {
			return err
		}
		id := holdID(key, op.Attempts)
		h, err := tx.LockHold(ctx, id)
		if errors.Is(err, ledger.ErrNoHold) {
			h, err = ledger.Hold{}, nil
		}
		if err != nil {
			return err
		}
		if !d.Applied {
			if h.State == ledger.Held {
				_, err = l.VoidTx(ctx, tx, id)
			}
			return err
		}
		cost := d.Cost
		if cost == 0 {
			cost = h.Amount
		}
		if h.State == ledger.Held {
			if _, err := l.SettleTx(ctx, tx, id, cost); err != nil {
				return err
			}
		}
		if d.Transcript != nil {
			sha, idxStr, _ := strings.Cut(op.Subject, "/")
			idx, err := strconv.Atoi(idxStr)
			if err != nil {
				return fmt.Errorf("recall: operation %s has no chunk number in its subject %q", key, op.Subject)
			}
			prov, _ := op.Evidence["provider"].(string)
			model, _ := op.Evidence["model"].(string)
			return a.storeTranscript(ctx, tx, sha, idx, prov, model, *d.Transcript, cost)
		}
		return nil
	})
	return op, err
}

// Export writes the transcripts of the batch's transcribed contents to
// dir, in the given formats, and returns how many contents it wrote.
func (a *Archive) Export(ctx context.Context, batch, dir string, formats []string) (int, error) {
	for _, f := range formats {
		if !validFormat(f) {
			return 0, fmt.Errorf("recall: unknown format %q: use %s", f, strings.Join(Formats, ", "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	states, err := a.contentStates(ctx, batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for sha, s := range states {
		if s != contentDone {
			continue
		}
		doc, err := a.document(ctx, sha)
		if err != nil {
			return n, err
		}
		paths, err := a.itemPaths(ctx, batch, sha)
		if err != nil {
			return n, err
		}
		for _, p := range paths {
			for _, f := range formats {
				if err := writeAtomically(filepath.Join(dir, outputName(p, sha, f)), render(doc, f)); err != nil {
					return n, err
				}
			}
		}
		n++
	}
	return n, nil
}

func validFormat(f string) bool {
	for _, g := range Formats {
		if f == g {
			return true
		}
	}
	return false
}
