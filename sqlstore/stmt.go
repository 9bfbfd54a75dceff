package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements, so that SQLite parses each query once
// per connection instead of on every call. (pgx caches PostgreSQL's
// statements itself.)
//
// On the writer's own connection (conn set) a statement is prepared the
// first time it is used. On a pool, preparing needs an idle connection,
// which a transaction may not leave, so a query seen for the first time runs
// unprepared and is noted; the owner of the pool prepares the noted queries
// once its transaction is over (see prepareWanted).
type stmtCache struct {
	db     *sql.DB
	conn   *sql.Conn
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	wanted map[string]bool
}

// maxStmts bounds the cache; queries past it are never prepared.
const maxStmts = 256

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*sql.Stmt), wanted: make(map[string]bool)}
}

func newConnStmtCache(conn *sql.Conn) *stmtCache {
	return &stmtCache{conn: conn, m: make(map[string]*sql.Stmt), wanted: make(map[string]bool)}
}

// get returns the prepared statement for query, or nil, after noting that
// query is wanted when it cannot be prepared now.
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok || c.m == nil {
		return st
	}
	if len(c.m)+len(c.wanted) >= maxStmts {
		return nil
	}
	if c.conn != nil {
		st, err := c.conn.PrepareContext(ctx, query)
		if err != nil {
			return nil // it runs unprepared
		}
		c.m[query] = st
		return st
	}
	c.wanted[query] = true
	return nil
}

// prepareWanted prepares the noted queries. Call it with no transaction of
// the pool open in this goroutine.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	wanted := c.wanted
	if len(wanted) == 0 || c.m == nil {
		c.mu.Unlock()
		return
	}
	c.wanted = make(map[string]bool)
	c.mu.Unlock()
	for q := range wanted {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue // it runs unprepared, as before
		}
		c.mu.Lock()
		if c.m == nil || c.m[q] != nil {
			st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// exec, query and queryRow run a query in the transaction, through a
// prepared statement when the cache has one.
func (tx *Tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.q.ExecContext(ctx, query, args...)
}

func (tx *Tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.q.QueryContext(ctx, query, args...)
}

func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.q.QueryRowContext(ctx, query, args...)
}

// prepared returns the statement for query, bound to the transaction.
func (tx *Tx) prepared(ctx context.Context, query string) *sql.Stmt {
	if tx.stmts == nil {
		return nil
	}
	st := tx.stmts.get(ctx, query)
	if st != nil && tx.sqlTx != nil {
		// Prepared on the pool: rebind to the transaction's connection.
		st = tx.sqlTx.StmtContext(ctx, st)
	}
	return st
}
