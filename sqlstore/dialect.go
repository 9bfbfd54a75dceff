package sqlstore

import (
	"database/sql"
	"strconv"
	"strings"
)

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
	// mergeEvidence is the expression that sets each top-level key of the
	// JSON object $1 over the evidence column.
	mergeEvidence string
	// move is Tx.Move's statement.
	move string
}

var (
	// json_patch merges objects recursively and deletes keys set to null:
	// the same as a top-level merge only when no value is an object or
	// null, which Move checks before using it.
	sqliteDialect = withMove(&dialect{name: "sqlite", mergeEvidence: "json_patch(evidence, $1)"})
	postgres      = withMove(&dialect{
		name:           "postgres",
		forUpdate:      " FOR UPDATE",
		skipLocked:     " FOR UPDATE SKIP LOCKED",
		lockMigrations: "SELECT pg_advisory_xact_lock(7289157034101)",
		mergeEvidence:  "evidence || $1::jsonb",
	})
)

// lock returns the locking clause for a read in tx.
func (tx *Tx) lock() string {
	if tx.readOnly {
		return ""
	}
	return tx.d.forUpdate
}

// withMove sets d's statement for Tx.Move: one conditional UPDATE that
// returns the operation; its evidence is $1.
func withMove(d *dialect) *dialect {
	d.move = `UPDATE rubicon_operations SET state = $3, attempts = attempts + $4, lease_expires_at = $5, updated_at = $6,
		last_phase = CASE WHEN $7 THEN $8 ELSE last_phase END, last_error = CASE WHEN $7 THEN $9 ELSE last_error END,
		evidence = CASE WHEN ` + d.typed(1, "jsonb") + ` IS NULL THEN evidence ELSE ` + d.mergeEvidence + ` END
		WHERE key = $2 AND state = $10 AND worker = $11 AND instance = $13 AND (` + d.typed(12, "bigint") + ` IS NULL OR lease_expires_at > $12)
			AND (` + d.typed(14, "integer") + ` = 0 OR attempts = $14)
		RETURNING ` + operationColumns
	return d
}

// jsonTexts returns a subquery of the strings in the JSON array that
// param holds: one parameter however many values, where a parameter each
// would meet the backends' limits on their number.
func (d *dialect) jsonTexts(param string) string {
	if d.name == "postgres" {
		return "SELECT jsonb_array_elements_text(" + param + "::jsonb)"
	}
	return "SELECT value FROM json_each(" + param + ")"
}

// typed returns parameter n, with its type written out where PostgreSQL
// cannot infer it (as in "$1 IS NULL").
func (d *dialect) typed(n int, typ string) string {
	if d.name == "postgres" {
		return "$" + strconv.Itoa(n) + "::" + typ
	}
	return "$" + strconv.Itoa(n)
}

// where builds a query's WHERE clause from optional conditions, numbering
// their parameters.
type where struct {
	conds []string
	args  []any
}

// arg adds the parameter v and returns its mark, $n.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// add adds a condition.
func (w *where) add(cond string) { w.conds = append(w.conds, cond) }

// in adds "column IN (...)" to w with a parameter per value, unless
// values is empty.
func in[S ~string](w *where, column string, values []S) {
	if len(values) == 0 {
		return
	}
	marks := make([]string, len(values))
	for i, v := range values {
		marks[i] = w.arg(string(v))
	}
	w.add(column + " IN (" + strings.Join(marks, ", ") + ")")
}

// scanAll reads every row of rows with scan, and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// String returns " WHERE ..." or nothing.
func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
