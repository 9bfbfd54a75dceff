package recall

import "github.com/rubicon-go/rubicon/sqlstore"

// Component names recall-archive's tables in the schema versions.
const Component = "recall"

// itemsSQL creates the archive's tables; the same SQL serves SQLite and
// PostgreSQL. Times are Unix microseconds.
const itemsSQL = `
CREATE TABLE recall_batches (
	name       TEXT PRIMARY KEY,
	created_at BIGINT NOT NULL
);
CREATE TABLE recall_contents (
	sha256      TEXT PRIMARY KEY,
	size        BIGINT NOT NULL,
	duration_us BIGINT NOT NULL DEFAULT 0,
	format      TEXT NOT NULL DEFAULT '',
	has_video   INTEGER NOT NULL DEFAULT 0,
	probed      INTEGER NOT NULL DEFAULT 0,
	added_at    BIGINT NOT NULL
);
CREATE TABLE recall_items (
	batch      TEXT NOT NULL REFERENCES recall_batches (name),
	path       TEXT NOT NULL,
	sha256     TEXT REFERENCES recall_contents (sha256),
	state      TEXT NOT NULL CHECK (state IN ('added', 'failed', 'rejected')),
	phase      TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	added_at   BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (batch, path)
);
CREATE INDEX recall_items_sha256 ON recall_items (sha256);
`

// Migrations are the archive's schema changes, for sqlstore.Open.
func Migrations() []sqlstore.Migration {
	return []sqlstore.Migration{
		{Component: Component, Version: 1, Name: "batches, contents and items", SQLite: itemsSQL, Postgres: itemsSQL},
	}
}
