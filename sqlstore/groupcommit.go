package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// committer runs the write transactions of a SQLite database through its
// single writer connection, and lets transactions that arrive while another
// is being committed share the next commit: each runs inside a savepoint of
// one transaction, so a failing one is rolled back alone, and the batch
// costs one fsync instead of one each. A caller's Update returns once the
// commit that holds its changes is durable.
type committer struct {
	db *sql.DB
	// stmts, if set, prepares the statements that the last batch wanted.
	stmts *stmtCache
	reqs  chan *writeReq
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// maxBatch bounds how many transactions share one commit.
const maxBatch = 64

type writeReq struct {
	ctx  context.Context
	fn   func(*sql.Tx) error
	done chan error
	// panicked carries a panic of fn back to its caller's goroutine.
	panicked any
}

var errClosed = errors.New("sqlstore: database is closed")

func newCommitter(db *sql.DB, stmts *stmtCache) *committer {
	c := &committer{db: db, stmts: stmts, reqs: make(chan *writeReq), quit: make(chan struct{})}
	c.wg.Go(c.run)
	return c
}

// do runs fn in a write transaction and returns once it is committed, or
// rolled back with fn's error.
func (c *committer) do(ctx context.Context, fn func(*sql.Tx) error) error {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.quit:
		return errClosed
	}
	err := <-r.done // fn may be running: wait for the verdict, whatever ctx says
	if r.panicked != nil {
		panic(r.panicked)
	}
	return err
}

func (c *committer) close() {
	c.once.Do(func() { close(c.quit) })
	c.wg.Wait()
}

func (c *committer) run() {
	for {
		select {
		case r := <-c.reqs:
			batch := []*writeReq{r}
		more:
			for len(batch) < maxBatch {
				select {
				case r := <-c.reqs:
					batch = append(batch, r)
				default:
					break more
				}
			}
			c.commit(batch)
			if c.stmts != nil {
				c.stmts.prepareWanted(context.Background())
			}
		case <-c.quit:
			return
		}
	}
}

// commit runs batch in one transaction, each request in a savepoint.
func (c *committer) commit(batch []*writeReq) {
	results := make([]error, len(batch))
	finish := func(shared error) {
		for i, r := range batch {
			if results[i] == nil {
				results[i] = shared
			}
			r.done <- results[i]
		}
	}
	if len(batch) == 1 {
		// Alone: no savepoint needed.
		r := batch[0]
		results[0] = c.single(r)
		finish(nil)
		return
	}
	tx, err := c.db.BeginTx(context.Background(), nil)
	if err != nil {
		finish(err)
		return
	}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if _, err := tx.Exec("SAVEPOINT rubicon_write"); err != nil {
			tx.Rollback()
			finish(err)
			return
		}
		if results[i] = call(r, tx); results[i] != nil {
			if _, err := tx.Exec("ROLLBACK TO rubicon_write"); err != nil {
				tx.Rollback()
				finish(fmt.Errorf("rolling back a failed transaction: %w", err))
				return
			}
		}
		if _, err := tx.Exec("RELEASE rubicon_write"); err != nil {
			tx.Rollback()
			finish(err)
			return
		}
	}
	finish(tx.Commit())
}

// single runs one request in a transaction of its own.
func (c *committer) single(r *writeReq) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	tx, err := c.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	if err := call(r, tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// call runs r.fn, turning a panic into an error for the batch and keeping
// it for r's caller.
func call(r *writeReq, tx *sql.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.fn(tx)
}
