package store

import "github.com/rubicon-go/rubicon/sqlstore"

// component names recall-archive's tables in the schema versions.
const component = "recall"

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

// chunksSQL records how each content is cut for its provider, and the
// transcript of each chunk, stored once per content.
const chunksSQL = `
CREATE TABLE recall_chunks (
	sha256      TEXT NOT NULL REFERENCES recall_contents (sha256),
	idx         INTEGER NOT NULL,
	count       INTEGER NOT NULL,
	start_us    BIGINT NOT NULL,
	duration_us BIGINT NOT NULL,
	op_key      TEXT NOT NULL UNIQUE,
	PRIMARY KEY (sha256, idx)
);
CREATE TABLE recall_transcripts (
	sha256     TEXT NOT NULL,
	idx        INTEGER NOT NULL,
	provider   TEXT NOT NULL,
	model      TEXT NOT NULL,
	text       TEXT NOT NULL,
	segments   TEXT NOT NULL,
	request_id TEXT NOT NULL DEFAULT '',
	cost       BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (sha256, idx),
	FOREIGN KEY (sha256, idx) REFERENCES recall_chunks (sha256, idx)
);
`

// Full-text search over transcript segments, with their time offsets from
// the start of the recording: FTS5 on SQLite, a tsvector on PostgreSQL.
const (
	searchSQLite = `
CREATE VIRTUAL TABLE recall_search USING fts5(
	sha256 UNINDEXED, idx UNINDEXED, start_us UNINDEXED, end_us UNINDEXED, text,
	tokenize = 'unicode61 remove_diacritics 2'
);`
	searchPostgres = `
CREATE TABLE recall_search (
	sha256   TEXT NOT NULL,
	idx      INTEGER NOT NULL,
	start_us BIGINT NOT NULL,
	end_us   BIGINT NOT NULL,
	text     TEXT NOT NULL,
	tsv      tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
);
CREATE INDEX recall_search_tsv ON recall_search USING GIN (tsv);
CREATE INDEX recall_search_chunk ON recall_search (sha256, idx);`
)

// budgetSQL keeps who changed each batch's budget, and when, and which of
// a batch's chunks its budget refused: a refused chunk was never sent, and
// goes when a run finds the money for it.
const budgetSQL = `
CREATE TABLE recall_budget_changes (
	batch      TEXT NOT NULL REFERENCES recall_batches (name),
	changed_at BIGINT NOT NULL,
	old_amount BIGINT NOT NULL,
	new_amount BIGINT NOT NULL,
	changed_by TEXT NOT NULL,
	how        TEXT NOT NULL
);
CREATE INDEX recall_budget_changes_batch ON recall_budget_changes (batch, changed_at);
CREATE TABLE recall_refusals (
	batch      TEXT NOT NULL REFERENCES recall_batches (name),
	op_key     TEXT NOT NULL,
	needed     BIGINT NOT NULL,
	missing    BIGINT NOT NULL,
	refused_at BIGINT NOT NULL,
	PRIMARY KEY (batch, op_key)
);
`

// migrations are the archive's schema changes, for sqlstore.Open.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{
		{Component: component, Version: 1, Name: "batches, contents and items", SQLite: itemsSQL, Postgres: itemsSQL},
		{Component: component, Version: 2, Name: "chunks and transcripts", SQLite: chunksSQL, Postgres: chunksSQL},
		{Component: component, Version: 3, Name: "full-text search", SQLite: searchSQLite, Postgres: searchPostgres},
		{Component: component, Version: 4, Name: "budget changes and refusals", SQLite: budgetSQL, Postgres: budgetSQL},
	}
}
