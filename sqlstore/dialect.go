package sqlstore

// dialect holds what differs between SQLite and PostgreSQL. Queries are
// written once, with $1-style parameters, which both drivers accept.
type dialect struct {
	name string
	// forUpdate locks the rows a SELECT returns, in a read-write
	// transaction. SQLite needs nothing: its writer holds the database.
	forUpdate string
	// skipLocked is forUpdate for claims: rows another worker holds are
	// passed over rather than waited for.
	skipLocked string
	// lockMigrations serializes schema changes between processes.
	lockMigrations string
}

var (
	sqliteDialect = &dialect{name: "sqlite"}
	postgres      = &dialect{
		name:           "postgres",
		forUpdate:      " FOR UPDATE",
		skipLocked:     " FOR UPDATE SKIP LOCKED",
		lockMigrations: "SELECT pg_advisory_xact_lock(7289157034101)",
	}
)

// lock returns the locking clause for a read in tx.
func (tx *Tx) lock() string {
	if tx.readOnly {
		return ""
	}
	return tx.d.forUpdate
}
