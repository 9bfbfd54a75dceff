package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// committer runs the write transactions of a SQLite database through its
// single writer connection, and lets transactions that arrive while another
// is being committed share the next commit: each runs inside a savepoint of
// one transaction, so a failing one is rolled back alone, and the batch
// costs one fsync instead of one each. A caller's Update returns once the
// commit that holds its changes is durable.
//
// There is no goroutine of its own: the caller that finds the writer free
// leads, running the queued transactions itself; the others wait, and when
// the leader's commit is durable it hands the lead to the first of them,
// who commits everything that queued up meanwhile. A lone writer thus
// commits in its own goroutine, with no hand-off at all.
//
// A commit is visible to other connections as soon as SQLite has made it,
// a moment before its sync ends, as with SQLite's own synchronous=NORMAL;
// the log only grows, and a sync covers everything written before it, so
// no caller is told that a change is durable before every change it could
// have read is durable too.
type committer struct {
	db *sql.DB
	// conn is the writer's own connection, on which every write
	// transaction runs; nil for an in-memory database, whose one
	// connection the pool shares with reads.
	conn *sql.Conn
	d    *dialect
	// stmts holds the prepared statements of the writes.
	stmts *stmtCache
	// wal, if set, syncs the write-ahead log after each commit, which
	// SQLite itself then does not.
	wal *walSyncer
	// clock is the store's, for the transactions' journal.Clock.
	clock *clock

	mu      sync.Mutex
	queue   []*writeReq
	leading bool // a caller is committing
	syncing int  // batches being committed and synced
	last    int  // the size of the last batch
	closed  bool
	idle    *sync.Cond // signalled when the last batch is delivered
}

// maxBatch bounds how many transactions share one commit.
const maxBatch = 64

type writeReq struct {
	ctx context.Context
	fn  func(*Tx) error
	// done receives the verdict, or nil with lead set: the request's
	// caller now leads.
	done chan verdict
	// panicked carries a panic of fn back to its caller's goroutine.
	panicked any
}

type verdict struct {
	err  error
	lead bool
}

var errClosed = errors.New("the database is closed")

// newCommitter returns a committer for the writes of db, on a connection
// of its own unless shared is set.
func newCommitter(db *sql.DB, d *dialect, shared bool) (*committer, error) {
	c := &committer{db: db, d: d}
	c.idle = sync.NewCond(&c.mu)
	if shared {
		c.stmts = newStmtCache(db)
		return c, nil
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		return nil, err
	}
	c.conn, c.stmts = conn, newConnStmtCache(conn)
	return c, nil
}

// do runs fn in a write transaction and returns once it is committed, or
// rolled back with fn's error.
func (c *committer) do(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan verdict, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.queue = append(c.queue, r)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	for !lead {
		// fn may be running: wait for the verdict, whatever ctx says.
		v := <-r.done
		if !v.lead {
			return r.result(v.err)
		}
		lead = true
	}
	c.lead(r)
	return r.result((<-r.done).err)
}

// result re-raises fn's panic in its caller, or returns err.
func (r *writeReq) result(err error) error {
	if r.panicked != nil {
		panic(r.panicked)
	}
	return err
}

// lead commits a batch: mine, which is first in the queue, and the
// requests queued behind it; syncs the log; passes the lead to the first
// request still waiting; and hands each request of its batch its verdict.
func (c *committer) lead(mine *writeReq) {
	c.mu.Lock()
	for i := 0; i < 4 && c.last > 1 && len(c.queue) < c.last; i++ {
		// Writers were busy: let those that the last batch released queue
		// up again, and share this commit.
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	n := min(len(c.queue), maxBatch)
	c.last = n
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.syncing++
	c.mu.Unlock()
	if batch[0] != mine {
		panic("sqlstore: a leader's request is not first in its batch")
	}

	results, committed := c.commit(batch)
	if c.conn == nil {
		c.stmts.prepareWanted(context.Background())
	}
	if committed && c.wal != nil {
		// Committed, but not durable until synced: an error here leaves
		// the callers believing their changes failed, and a sending
		// operation that is then never sent becomes ambiguous, never sent
		// twice.
		if err := c.wal.sync(); err != nil {
			for i := range results {
				if results[i] == nil {
					results[i] = err
				}
			}
		}
	}
	// The verdicts first: the callers they release, busy workers, often
	// queue their next transaction at once, and join the next batch.
	for i, r := range batch[1:] {
		r.done <- verdict{err: results[i+1]}
	}
	// The lead passes on only now: the requests that queued up during the
	// sync make the next batch, and share its sync.
	c.mu.Lock()
	c.syncing--
	if len(c.queue) == 0 {
		c.leading = false
		c.idle.Broadcast()
	} else {
		c.queue[0].done <- verdict{lead: true}
	}
	c.mu.Unlock()
	mine.done <- verdict{err: results[0]}
}

// close refuses new transactions, waits for those under way, and releases
// the connection.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	for c.leading || c.syncing > 0 {
		c.idle.Wait()
	}
	c.mu.Unlock()
	c.stmts.close()
	if c.conn != nil {
		c.conn.Close()
	}
	if c.wal != nil {
		c.wal.close()
	}
}

// commit runs batch in one transaction, each request in a savepoint
// unless it is alone, and returns each request's result and whether the
// transaction committed.
func (c *committer) commit(batch []*writeReq) (results []error, committed bool) {
	results = make([]error, len(batch))
	fail := func(shared error) ([]error, bool) {
		for i := range results {
			if results[i] == nil {
				results[i] = shared
			}
		}
		return results, false
	}
	if len(batch) == 1 {
		if err := batch[0].ctx.Err(); err != nil {
			return fail(err)
		}
	}
	tx, err := c.begin()
	if err != nil {
		return fail(err)
	}
	if len(batch) == 1 {
		if results[0] = call(batch[0], tx); results[0] != nil {
			c.rollback(tx)
			return results, false
		}
		if err := c.end(tx); err != nil {
			return fail(err)
		}
		return results, true
	}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if _, err := tx.exec(context.Background(), "SAVEPOINT rubicon_write"); err != nil {
			c.rollback(tx)
			return fail(err)
		}
		if results[i] = call(r, tx); results[i] != nil {
			if _, err := tx.exec(context.Background(), "ROLLBACK TO rubicon_write"); err != nil {
				c.rollback(tx)
				return fail(fmt.Errorf("rolling back a failed transaction: %w", err))
			}
		}
		if _, err := tx.exec(context.Background(), "RELEASE rubicon_write"); err != nil {
			c.rollback(tx)
			return fail(err)
		}
	}
	if err := c.end(tx); err != nil {
		return fail(err)
	}
	return results, true
}

// begin starts a write transaction: on the writer's own connection, with
// BEGIN IMMEDIATE (database/sql would start a goroutine per transaction),
// or, in memory, on the pool.
func (c *committer) begin() (*Tx, error) {
	if c.conn == nil {
		stx, err := c.db.BeginTx(context.Background(), nil)
		if err != nil {
			return nil, err
		}
		return &Tx{q: stx, sqlTx: stx, d: c.d, stmts: c.stmts, clock: c.clock}, nil
	}
	tx := &Tx{q: c.conn, d: c.d, stmts: c.stmts, clock: c.clock}
	// Through the statement cache, as every statement here: parsed once.
	if _, err := tx.exec(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	return tx, nil
}

// end commits tx.
func (c *committer) end(tx *Tx) error {
	if tx.sqlTx != nil {
		return tx.sqlTx.Commit()
	}
	if _, err := tx.exec(context.Background(), "COMMIT"); err != nil {
		c.rollback(tx)
		return err
	}
	return nil
}

// rollback ends tx without its changes.
func (c *committer) rollback(tx *Tx) {
	if tx.sqlTx != nil {
		tx.sqlTx.Rollback()
		return
	}
	// An error here means no transaction was open any more.
	tx.exec(context.Background(), "ROLLBACK")
}

// call runs r.fn, turning a panic into an error for the batch and keeping
// it for r's caller.
func call(r *writeReq, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.fn(tx)
}
