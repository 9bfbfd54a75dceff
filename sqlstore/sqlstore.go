// Package sqlstore keeps rubicon's journal and ledger in SQL: SQLite
// (modernc.org/sqlite, pure Go) as the embedded default, PostgreSQL (pgx)
// for many workers on many machines. One implementation over database/sql
// serves both through a small dialect, and one conformance suite tests both.
//
// The schema is created and upgraded by versioned migrations embedded in
// the binary, applied when the database is opened. Applications add their
// own tables through the same mechanism ([Migration]). A database made by a
// newer version than the binary knows is refused with a clear error.
//
// On SQLite, write transactions go through a single writer connection with
// BEGIN IMMEDIATE, in WAL mode, with a busy timeout and foreign keys on;
// transactions that arrive while one commits share the next commit (group
// commit), each in a savepoint of its own. On PostgreSQL, workers claim
// operations with SELECT … FOR UPDATE SKIP LOCKED.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // also the "pgx" driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

// Synchronous is SQLite's durability setting.
type Synchronous string

const (
	// Full syncs the write-ahead log on every commit: a committed
	// transaction survives a power failure. The default.
	Full Synchronous = "FULL"
	// Normal syncs only at checkpoints: a committed transaction survives a
	// crash of the process, but the last ones may be lost to a power
	// failure or an operating-system crash.
	Normal Synchronous = "NORMAL"
)

// Options configure [Open].
type Options struct {
	// BusyTimeout is how long a write waits for a lock held by another
	// process (SQLite) before failing with ErrLocked. Default 5 s.
	BusyTimeout time.Duration
	// Synchronous is SQLite's durability setting. Default Full.
	Synchronous Synchronous
	// Migrations are the application's own, applied after rubicon's.
	Migrations []Migration
	// MaxConns caps PostgreSQL connections (default 10) and SQLite readers
	// (default 4).
	MaxConns int
	// Clock, if set, replaces the store's clock (see clock.go: the
	// database's on PostgreSQL, the host's boot clock on SQLite), which
	// judges the journal's leases: for tests that move time. Every process
	// that shares the database must then use the same.
	Clock func() time.Time
	// ReadOnly opens the database for reading only, as a file or a role
	// without write access allows: nothing is migrated (a schema older
	// than the program's is refused, naming the upgrade it needs), and
	// every Update fails with an error wrapping ErrReadOnly.
	ReadOnly bool
}

// idleInTransaction is how long PostgreSQL lets a transaction wait for
// its client before it ends it, releasing its locks, unless the DSN says
// otherwise.
const idleInTransaction = time.Minute

// ErrLocked reports a database that stayed locked past the busy timeout.
var ErrLocked = errors.New("the database is locked")

// ErrLogReplaced reports a SQLite database whose write-ahead log was
// deleted or replaced while it was open: its commits can no longer be
// made durable, and every write fails until it is opened again.
var ErrLogReplaced = errors.New("the write-ahead log was deleted or replaced")

// ErrNotWritable reports a SQLite database that cannot be opened for
// writing, as a read-only file or directory: Options.ReadOnly opens it.
var ErrNotWritable = errors.New("not writable")

// ErrNotPostgresURL is the error of a postgres:// DSN that is not a URL
// PostgreSQL's driver can read.
var ErrNotPostgresURL = errors.New("not a PostgreSQL URL")

// ErrReadOnly reports a write to a database opened with Options.ReadOnly.
var ErrReadOnly = errors.New("the database is opened read-only")

// DB is an open journal-and-ledger database. It is safe for concurrent use.
type DB struct {
	d       *dialect
	writer  *sql.DB // every write; on SQLite a single connection
	reader  *sql.DB // reads; the same as writer on PostgreSQL
	direct  *sql.DB // DB.SQL's; the same as writer but on a SQLite file
	name    string  // for messages: the file path, or the DSN without password
	timeout time.Duration
	// commits runs SQLite's writes; nil on PostgreSQL.
	commits *committer
	// readStmts caches SQLite's prepared statements of reads; nil on
	// PostgreSQL, and in memory, where reads go through commits.
	readStmts *stmtCache
	clock     *clock
	// readOnly: opened with Options.ReadOnly.
	readOnly bool
}

// Open opens, creating it if needed, the database that dsn names, and
// brings its schema up to date. A dsn starting with postgres:// or
// postgresql:// selects PostgreSQL. Anything else is SQLite: a file path;
// a file: URI such as "file:/data/rubicon.db" (percent-escapes decoded;
// parameters other than mode=rwc, mode=rw and mode=memory refused); either
// optionally prefixed with sqlite:; or ":memory:" (also file::memory: and
// mode=memory) for a database in memory, which lives as long as the DB and
// has one connection for reads and writes, so that a View must not be
// started inside an Update.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Synchronous == "" {
		opts.Synchronous = Full
	}
	if opts.Synchronous != Full && opts.Synchronous != Normal {
		return nil, fmt.Errorf("the Synchronous option is %q: use FULL or NORMAL", opts.Synchronous)
	}
	var db *DB
	var err error
	pg := strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
	if pg {
		db, err = openPostgres(dsn, opts)
	} else {
		db, err = openSQLite(dsn, opts)
	}
	if err != nil {
		return nil, err
	}
	db.clock = &clock{fixed: opts.Clock, postgres: pg}
	if db.commits != nil {
		db.commits.clock = db.clock
	}
	db.readOnly = opts.ReadOnly
	migrate := db.migrate
	if opts.ReadOnly {
		migrate = db.checkMigrated
	}
	if err := migrate(ctx, opts.Migrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.anchorClock(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func openPostgres(dsn string, opts Options) (*DB, error) {
	name := RedactDSN(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s is %w: give postgres://USER@HOST:PORT/DATABASE (%w)", name, ErrNotPostgresURL, err)
	}
	if _, set := cfg.RuntimeParams["idle_in_transaction_session_timeout"]; !set {
		// A transaction of a process that stopped (suspended, frozen)
		// holds its row locks until the server ends it: every other
		// worker would wait for them. None of ours is idle for this long.
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.Itoa(int(idleInTransaction.Milliseconds()))
	}
	pool := stdlib.OpenDB(*cfg)
	n := opts.MaxConns
	if n <= 0 {
		n = 10
	}
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	return &DB{d: postgres, writer: pool, reader: pool, direct: pool, name: name, timeout: opts.BusyTimeout}, nil
}

func openSQLite(dsn string, opts Options) (*DB, error) {
	path, memory, err := sqlitePath(dsn)
	if err != nil {
		return nil, err
	}
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(%s)",
		opts.BusyTimeout.Milliseconds(), opts.Synchronous)
	if memory {
		return openMemory(common, opts)
	}
	if opts.ReadOnly {
		return openSQLiteReadOnly(path, common, opts)
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	uri := "file:" + (&url.URL{Path: path}).EscapedPath()
	var wal *walSyncer
	writerSync := common
	if opts.Synchronous == Full && syncsWAL {
		// The writer commits in NORMAL and the committer syncs the log
		// after each commit: see walsync_linux.go.
		wal = newWALSyncer(path)
		writerSync = strings.Replace(common, "synchronous(FULL)", "synchronous(NORMAL)", 1)
	}
	writer, err := sql.Open("sqlite", uri+"?_txlock=immediate&_pragma=journal_mode(WAL)&"+writerSync)
	if err != nil {
		return nil, fmt.Errorf("cannot open the SQLite database %s: %w", path, err)
	}
	// One connection for every write of the journal and the ledger, which
	// queue for it instead of spinning on SQLite's lock.
	writer.SetMaxOpenConns(1)
	writer.SetConnMaxIdleTime(0)
	// Create the file and switch it to WAL now, so that a path that cannot
	// be written fails here with its name.
	fail := func(err error) error {
		return fmt.Errorf("cannot open the SQLite database %s: %w", path, err)
	}
	if err := writer.Ping(); err != nil {
		writer.Close()
		return nil, (&DB{name: path, timeout: opts.BusyTimeout}).wrap(fail(err))
	}
	commits, err := newCommitter(writer, sqliteDialect, false)
	if err != nil {
		writer.Close()
		return nil, fail(err)
	}
	commits.wal = wal
	reader, err := sql.Open("sqlite", uri+"?_pragma=query_only(1)&"+common)
	if err != nil {
		commits.close()
		writer.Close()
		return nil, fail(err)
	}
	n := opts.MaxConns
	if n <= 0 {
		n = 4
	}
	reader.SetMaxOpenConns(n)
	// An application's own statements outside transactions (DB.SQL): one
	// connection, with the durability asked for.
	direct, err := sql.Open("sqlite", uri+"?"+common)
	if err != nil {
		commits.close()
		writer.Close()
		reader.Close()
		return nil, fail(err)
	}
	direct.SetMaxOpenConns(1)
	return &DB{d: sqliteDialect, writer: writer, reader: reader, direct: direct, name: path, timeout: opts.BusyTimeout,
		commits: commits, readStmts: newStmtCache(reader)}, nil
}

// openSQLiteReadOnly opens the database at path for reading only. A
// database whose write-ahead log is gone (closed cleanly) and whose
// directory cannot be written is opened immutable: SQLite could not make
// the shared-memory file beside it, and nothing can write it meanwhile.
func openSQLiteReadOnly(path, common string, opts Options) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cannot open the SQLite database %s read-only: %w", path, err)
	}
	params := "mode=ro&_pragma=query_only(1)&" + common
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) {
		if probe, err := os.CreateTemp(filepath.Dir(path), ".rubicon-write-check-*"); err != nil {
			params = "immutable=1&" + params
		} else {
			probe.Close()
			os.Remove(probe.Name())
		}
	}
	pool, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+params)
	if err != nil {
		return nil, fmt.Errorf("cannot open the SQLite database %s read-only: %w", path, err)
	}
	n := opts.MaxConns
	if n <= 0 {
		n = 4
	}
	pool.SetMaxOpenConns(n)
	if err := pool.Ping(); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot open the SQLite database %s read-only: %w", path, err)
	}
	return &DB{d: sqliteDialect, writer: pool, reader: pool, direct: pool, name: path, timeout: opts.BusyTimeout}, nil
}

// openMemory opens a database that lives in memory for as long as the DB:
// one connection serves reads and writes, since every connection to
// ":memory:" is a database of its own.
func openMemory(common string, opts Options) (*DB, error) {
	pool, err := sql.Open("sqlite", "file::memory:?_txlock=immediate&"+common)
	if err != nil {
		return nil, fmt.Errorf("cannot open an in-memory SQLite database: %w", err)
	}
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	pool.SetConnMaxIdleTime(0)
	pool.SetConnMaxLifetime(0)
	if err := pool.Ping(); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot open an in-memory SQLite database: %w", err)
	}
	commits, err := newCommitter(pool, sqliteDialect, true)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot open an in-memory SQLite database: %w", err)
	}
	return &DB{d: sqliteDialect, writer: pool, reader: pool, direct: pool, name: ":memory:", timeout: opts.BusyTimeout, commits: commits}, nil
}

// sqlitePath reads a SQLite DSN: a file path, or a file: URI
// ("file:/data/r.db", "file:r.db", percent-escapes decoded), either
// optionally prefixed with sqlite:, or ":memory:". A URI's parameters are
// refused, except mode=rwc, mode=rw and mode=memory: sqlstore sets SQLite's
// options itself, and needs to write.
func sqlitePath(dsn string) (path string, memory bool, err error) {
	dsn = strings.TrimPrefix(dsn, "sqlite:")
	if dsn == ":memory:" {
		return "", true, nil
	}
	if !strings.HasPrefix(dsn, "file:") {
		if dsn == "" {
			return "", false, errors.New("no database path given: give a file path, a file: URI, \":memory:\" or a postgres:// URL")
		}
		return dsn, false, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", false, fmt.Errorf("%q is not a file: URI (%v): give a plain path, or escape the URI", dsn, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", false, fmt.Errorf("%q names host %q: a file: URI names a local file, as file:/data/r.db", dsn, u.Host)
	}
	if u.Fragment != "" {
		return "", false, fmt.Errorf("%q has a fragment (#%s): escape # in a file name as %%23", dsn, u.Fragment)
	}
	path = u.Path
	if u.Opaque != "" {
		if path, err = url.PathUnescape(u.Opaque); err != nil {
			return "", false, fmt.Errorf("%q is not a file: URI (%v): give a plain path, or escape the URI", dsn, err)
		}
	}
	for name, values := range u.Query() {
		switch v := values[len(values)-1]; {
		case name == "mode" && v == "memory":
			memory = true
		case name == "mode" && (v == "rwc" || v == "rw"):
		case name == "mode":
			return "", false, fmt.Errorf("%q asks for mode=%s: the journal writes (migrations, transitions, recovery), so the database is opened read-write; remove the parameter", dsn, v)
		default:
			return "", false, fmt.Errorf("%q sets %s: parameters are not taken, since sqlstore sets SQLite's options itself (see Options); give the path alone", dsn, name)
		}
	}
	if path == ":memory:" {
		memory = true
	}
	if memory {
		return "", true, nil
	}
	if path == "" {
		return "", false, fmt.Errorf("%q names no file", dsn)
	}
	return path, false, nil
}

// checkWritable fails early, naming the path, when SQLite could not create
// or write the database or its write-ahead log there.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot create database %s: the directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("cannot use database %s: %w", path, err)
	case !info.IsDir():
		return fmt.Errorf("cannot create database %s: %s is not a directory", path, dir)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("cannot use database %s: it is a directory", path)
	}
	// SQLite writes its -wal and -shm files beside the database, so the
	// directory itself must be writable.
	probe, err := os.CreateTemp(dir, ".rubicon-write-check-*")
	if err != nil {
		return fmt.Errorf("database %s is %w: cannot create files in %s: %w", path, ErrNotWritable, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("database %s is %w: %w", path, ErrNotWritable, err)
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error {
	if db.commits != nil {
		db.commits.close()
	}
	if db.readStmts != nil {
		db.readStmts.close()
	}
	err := db.writer.Close()
	if db.reader != db.writer {
		err = errors.Join(err, db.reader.Close())
	}
	if db.direct != db.writer {
		err = errors.Join(err, db.direct.Close())
	}
	return err
}

// Backend returns "sqlite" or "postgres".
func (db *DB) Backend() string { return db.d.name }

// SQL returns a connection pool for an application's own queries outside
// transactions. Inside Update, use the transaction's SQL instead: on
// SQLite a write through this pool waits for the transaction's lock, and
// in memory the pool's one connection is the transaction's.
func (db *DB) SQL() *sql.DB { return db.direct }

// Tx is a transaction. It implements journal.Tx and ledger.Tx, so that a
// journal transition and a ledger change can commit together.
type Tx struct {
	q Querier
	// sqlTx is q when q is a database/sql transaction, and nil when it is
	// SQLite's writer connection in a transaction of its own.
	sqlTx    *sql.Tx
	d        *dialect
	readOnly bool
	stmts    *stmtCache // nil: no cache
	clock    *clock
}

// Querier runs statements; *sql.Tx and *sql.Conn are Queriers.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// SQL returns what runs an application's own statements inside the
// transaction, on its tables: they commit or roll back with it. Do not
// start or end transactions through it.
func (tx *Tx) SQL() Querier { return tx.q }

// Update runs fn in a read-write transaction, committed if fn returns nil
// and rolled back otherwise. It returns once the commit is durable. On
// SQLite, transactions of concurrent callers may share one commit (each in
// a savepoint, so that a failing one is rolled back alone): fn must not
// call Update itself, and should do no slow work, since other writers wait
// for it.
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
	if db.readOnly {
		return fmt.Errorf("%w (%s): this changes it, and needs write access", ErrReadOnly, db.name)
	}
	if db.commits != nil {
		return db.wrap(db.commits.do(ctx, fn))
	}
	return db.run(ctx, db.writer, false, fn)
}

// View runs fn in a read-only transaction.
func (db *DB) View(ctx context.Context, fn func(*Tx) error) error {
	if db.reader == db.writer && db.commits != nil {
		// In memory, the one connection serves reads too.
		return db.wrap(db.commits.do(ctx, func(tx *Tx) error {
			tx.readOnly = true
			return fn(tx)
		}))
	}
	return db.run(ctx, db.reader, true, fn)
}

func (db *DB) run(ctx context.Context, pool *sql.DB, readOnly bool, fn func(*Tx) error) (err error) {
	var opts *sql.TxOptions
	if readOnly && db.d == postgres {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	stx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return db.wrap(err)
	}
	defer func() {
		if p := recover(); p != nil {
			stx.Rollback()
			panic(p)
		}
	}()
	stmts := db.readStmts // nil on PostgreSQL
	if stmts != nil {
		defer stmts.prepareWanted(ctx)
	}
	if err := fn(&Tx{q: stx, sqlTx: stx, d: db.d, readOnly: readOnly, stmts: stmts, clock: db.clock}); err != nil {
		stx.Rollback()
		return db.wrap(err)
	}
	return db.wrap(stx.Commit())
}

// wrap turns SQLite's busy error into ErrLocked, with a message that says
// what happened; other errors pass unchanged.
func (db *DB) wrap(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		by := "another connection or process"
		if holder := lockHolder(db.name); holder != "" {
			by = holder
		}
		return fmt.Errorf("%w: %s stayed locked by %s for the busy timeout (%s): %v", ErrLocked, db.name, by, db.timeout, err)
	}
	return err
}

// JournalStore returns db as a journal.Store.
func (db *DB) JournalStore() journal.Store { return journalStore{db} }

// LedgerStore returns db as a ledger.Store.
func (db *DB) LedgerStore() ledger.Store { return ledgerStore{db} }

type journalStore struct{ db *DB }

// Update implements journal.Store.
func (s journalStore) Update(ctx context.Context, fn func(journal.Tx) error) error {
	return s.db.Update(ctx, func(tx *Tx) error { return fn(tx) })
}

// View implements journal.Store.
func (s journalStore) View(ctx context.Context, fn func(journal.Tx) error) error {
	return s.db.View(ctx, func(tx *Tx) error { return fn(tx) })
}

type ledgerStore struct{ db *DB }

// Update implements ledger.Store.
func (s ledgerStore) Update(ctx context.Context, fn func(ledger.Tx) error) error {
	return s.db.Update(ctx, func(tx *Tx) error { return fn(tx) })
}

// View implements ledger.Store.
func (s ledgerStore) View(ctx context.Context, fn func(ledger.Tx) error) error {
	return s.db.View(ctx, func(tx *Tx) error { return fn(tx) })
}

// password is the password of a DSN that may not parse as a URL.
var password = regexp.MustCompile(`^([a-z]+://[^/@:]*):[^/@]*@`)

// RedactDSN returns dsn with its password hidden, even in one that is not
// a valid URL: for messages that name a database.
func RedactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return password.ReplaceAllString(dsn, "$1:xxxxx@")
}
