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

// A transcript is made by a provider's model: chunks, their transcripts
// and the search index are kept per content, provider and model, so that
// a run with another provider or model transcribes again what it has not
// transcribed itself, and a sandbox's placeholders are told from real
// transcripts. Existing chunks take the provider and model of their
// content's transcripts; those without are filled in from their journal
// operations when the store opens (backfillTranscribers), else "unknown".
const (
	transcriberSQLite = `
CREATE TABLE recall_chunks_v5 (
	sha256      TEXT NOT NULL REFERENCES recall_contents (sha256),
	provider    TEXT NOT NULL,
	model       TEXT NOT NULL,
	idx         INTEGER NOT NULL,
	count       INTEGER NOT NULL,
	start_us    BIGINT NOT NULL,
	duration_us BIGINT NOT NULL,
	op_key      TEXT NOT NULL UNIQUE,
	planned_at  BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (sha256, provider, model, idx)
);
INSERT INTO recall_chunks_v5 (sha256, provider, model, idx, count, start_us, duration_us, op_key)
	SELECT c.sha256,
		COALESCE((SELECT t.provider FROM recall_transcripts t WHERE t.sha256 = c.sha256 AND t.provider <> '' ORDER BY t.idx LIMIT 1), ''),
		COALESCE((SELECT t.model FROM recall_transcripts t WHERE t.sha256 = c.sha256 AND t.provider <> '' ORDER BY t.idx LIMIT 1), ''),
		c.idx, c.count, c.start_us, c.duration_us, c.op_key
	FROM recall_chunks c;
CREATE TABLE recall_transcripts_v5 (
	sha256     TEXT NOT NULL,
	provider   TEXT NOT NULL,
	model      TEXT NOT NULL,
	idx        INTEGER NOT NULL,
	text       TEXT NOT NULL,
	segments   TEXT NOT NULL,
	request_id TEXT NOT NULL DEFAULT '',
	cost       BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (sha256, provider, model, idx),
	FOREIGN KEY (sha256, provider, model, idx) REFERENCES recall_chunks_v5 (sha256, provider, model, idx) ON UPDATE CASCADE
);
INSERT INTO recall_transcripts_v5 (sha256, provider, model, idx, text, segments, request_id, cost, created_at)
	SELECT t.sha256, c.provider, c.model, t.idx, t.text, t.segments, t.request_id, t.cost, t.created_at
	FROM recall_transcripts t JOIN recall_chunks_v5 c ON c.sha256 = t.sha256 AND c.idx = t.idx;
CREATE VIRTUAL TABLE recall_search_v5 USING fts5(
	sha256 UNINDEXED, provider UNINDEXED, model UNINDEXED, idx UNINDEXED, start_us UNINDEXED, end_us UNINDEXED, text,
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO recall_search_v5 (sha256, provider, model, idx, start_us, end_us, text)
	SELECT s.sha256, c.provider, c.model, s.idx, s.start_us, s.end_us, s.text
	FROM recall_search s JOIN recall_chunks_v5 c ON c.sha256 = s.sha256 AND c.idx = s.idx;
DROP TABLE recall_search;
DROP TABLE recall_transcripts;
DROP TABLE recall_chunks;
ALTER TABLE recall_chunks_v5 RENAME TO recall_chunks;
ALTER TABLE recall_transcripts_v5 RENAME TO recall_transcripts;
ALTER TABLE recall_search_v5 RENAME TO recall_search;
`
	transcriberPostgres = `
ALTER TABLE recall_transcripts DROP CONSTRAINT recall_transcripts_sha256_idx_fkey;
ALTER TABLE recall_chunks ADD COLUMN provider TEXT NOT NULL DEFAULT '', ADD COLUMN model TEXT NOT NULL DEFAULT '',
	ADD COLUMN planned_at BIGINT NOT NULL DEFAULT 0;
UPDATE recall_chunks c SET provider = t.provider, model = t.model
	FROM (SELECT DISTINCT ON (sha256) sha256, provider, model FROM recall_transcripts WHERE provider <> '' ORDER BY sha256, idx) t
	WHERE t.sha256 = c.sha256;
ALTER TABLE recall_chunks DROP CONSTRAINT recall_chunks_pkey, ADD PRIMARY KEY (sha256, provider, model, idx);
UPDATE recall_transcripts t SET provider = c.provider, model = c.model FROM recall_chunks c WHERE c.sha256 = t.sha256 AND c.idx = t.idx;
ALTER TABLE recall_transcripts DROP CONSTRAINT recall_transcripts_pkey, ADD PRIMARY KEY (sha256, provider, model, idx),
	ADD FOREIGN KEY (sha256, provider, model, idx) REFERENCES recall_chunks (sha256, provider, model, idx) ON UPDATE CASCADE;
ALTER TABLE recall_search ADD COLUMN provider TEXT NOT NULL DEFAULT '', ADD COLUMN model TEXT NOT NULL DEFAULT '';
UPDATE recall_search s SET provider = c.provider, model = c.model FROM recall_chunks c WHERE c.sha256 = s.sha256 AND c.idx = s.idx;
DROP INDEX recall_search_chunk;
CREATE INDEX recall_search_chunk ON recall_search (sha256, provider, model, idx);
`

	// archiveSQL is version 7: the archive's own name, random, which what
	// a run keeps on disk for it (its outbox) is filed under.
	archiveSQL = `
CREATE TABLE recall_archive (
	one INTEGER PRIMARY KEY CHECK (one = 1),
	id  TEXT NOT NULL
);
`
)

// sixSQL keeps three things of version 6: how finely each transcript is
// timed (a provider that gives text alone times it to its chunk); the path
// a file was added by, beside the real, absolute path it is recorded by
// (empty: the same); and, per batch, the sandbox's play money that earlier
// versions held on the batch's budget account and that its ledger limit
// now carries above the budget, so that it never counts against it (see
// Store.fitLimit). A batch without a row was not yet looked at.
const sixSQL = `
ALTER TABLE recall_transcripts ADD COLUMN timing TEXT NOT NULL DEFAULT '';
ALTER TABLE recall_items ADD COLUMN shown_path TEXT NOT NULL DEFAULT '';
CREATE TABLE recall_play_carried (
	batch  TEXT PRIMARY KEY REFERENCES recall_batches (name),
	amount BIGINT NOT NULL
);
`

// Speakers are labelled by the provider ("A", "B") and named by a person
// afterwards: names are kept per recording's content and label, for every
// transcript and batch that holds it, and the search index keeps each
// segment's label, so that a search finds one speaker's words by label or
// name. The index is made again from the transcripts' segments, which
// hold the labels; the same SQL on both backends but for reading JSON.
const (
	speakerNamesSQL = `
CREATE TABLE recall_speakers (
	sha256   TEXT NOT NULL REFERENCES recall_contents (sha256),
	label    TEXT NOT NULL,
	name     TEXT NOT NULL,
	named_at BIGINT NOT NULL,
	PRIMARY KEY (sha256, label)
);
`
	speakersSQLite = speakerNamesSQL + `
CREATE VIRTUAL TABLE recall_search_speakers USING fts5(
	sha256 UNINDEXED, provider UNINDEXED, model UNINDEXED, idx UNINDEXED, start_us UNINDEXED, end_us UNINDEXED, speaker UNINDEXED, text,
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO recall_search_speakers (sha256, provider, model, idx, start_us, end_us, speaker, text)
	SELECT t.sha256, t.provider, t.model, t.idx,
		c.start_us + json_extract(seg.value, '$.start') / 1000, c.start_us + json_extract(seg.value, '$.end') / 1000,
		COALESCE(json_extract(seg.value, '$.speaker'), ''), json_extract(seg.value, '$.text')
	FROM recall_transcripts t
	JOIN recall_chunks c ON c.sha256 = t.sha256 AND c.provider = t.provider AND c.model = t.model AND c.idx = t.idx,
		json_each(t.segments) seg
	WHERE COALESCE(json_extract(seg.value, '$.text'), '') <> ''
	ORDER BY t.sha256, t.provider, t.model, t.idx, seg.key;
DROP TABLE recall_search;
ALTER TABLE recall_search_speakers RENAME TO recall_search;
`
	speakersPostgres = speakerNamesSQL + `
ALTER TABLE recall_search ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
DELETE FROM recall_search;
INSERT INTO recall_search (sha256, provider, model, idx, start_us, end_us, speaker, text)
	SELECT t.sha256, t.provider, t.model, t.idx,
		c.start_us + (seg.value->>'start')::bigint / 1000, c.start_us + (seg.value->>'end')::bigint / 1000,
		COALESCE(seg.value->>'speaker', ''), seg.value->>'text'
	FROM recall_transcripts t
	JOIN recall_chunks c ON c.sha256 = t.sha256 AND c.provider = t.provider AND c.model = t.model AND c.idx = t.idx,
		jsonb_array_elements(CASE WHEN jsonb_typeof(t.segments::jsonb) = 'array' THEN t.segments::jsonb ELSE '[]' END) WITH ORDINALITY AS seg (value, n)
	WHERE COALESCE(seg.value->>'text', '') <> ''
	ORDER BY t.sha256, t.provider, t.model, t.idx, seg.n;
`
)

// A transcript is made with its settings too (version 9): the language,
// speakers, prompt and vocabulary it was asked with, in their canonical
// form (provider.Options.Settings), are part of the key of chunks,
// transcripts and the search index, so that a run asking for other
// settings is told apart from the transcripts that were made. What was
// kept before takes the default settings, "". On SQLite, whose keys
// cannot be altered, the tables are made again; the search index takes
// the column last, so that its text keeps its place for snippet().
const (
	settingsSQLite = `
CREATE TABLE recall_chunks_v9 (
	sha256      TEXT NOT NULL REFERENCES recall_contents (sha256),
	provider    TEXT NOT NULL,
	model       TEXT NOT NULL,
	settings    TEXT NOT NULL DEFAULT '',
	idx         INTEGER NOT NULL,
	count       INTEGER NOT NULL,
	start_us    BIGINT NOT NULL,
	duration_us BIGINT NOT NULL,
	op_key      TEXT NOT NULL UNIQUE,
	planned_at  BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (sha256, provider, model, settings, idx)
);
INSERT INTO recall_chunks_v9 (sha256, provider, model, idx, count, start_us, duration_us, op_key, planned_at)
	SELECT sha256, provider, model, idx, count, start_us, duration_us, op_key, planned_at FROM recall_chunks;
CREATE TABLE recall_transcripts_v9 (
	sha256     TEXT NOT NULL,
	provider   TEXT NOT NULL,
	model      TEXT NOT NULL,
	settings   TEXT NOT NULL DEFAULT '',
	idx        INTEGER NOT NULL,
	text       TEXT NOT NULL,
	segments   TEXT NOT NULL,
	request_id TEXT NOT NULL DEFAULT '',
	cost       BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	timing     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (sha256, provider, model, settings, idx),
	FOREIGN KEY (sha256, provider, model, settings, idx) REFERENCES recall_chunks_v9 (sha256, provider, model, settings, idx) ON UPDATE CASCADE
);
INSERT INTO recall_transcripts_v9 (sha256, provider, model, idx, text, segments, request_id, cost, created_at, timing)
	SELECT sha256, provider, model, idx, text, segments, request_id, cost, created_at, timing FROM recall_transcripts;
CREATE VIRTUAL TABLE recall_search_v9 USING fts5(
	sha256 UNINDEXED, provider UNINDEXED, model UNINDEXED, idx UNINDEXED, start_us UNINDEXED, end_us UNINDEXED, speaker UNINDEXED, text, settings UNINDEXED,
	tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO recall_search_v9 (sha256, provider, model, idx, start_us, end_us, speaker, text, settings)
	SELECT sha256, provider, model, idx, start_us, end_us, speaker, text, '' FROM recall_search;
DROP TABLE recall_search;
DROP TABLE recall_transcripts;
DROP TABLE recall_chunks;
ALTER TABLE recall_chunks_v9 RENAME TO recall_chunks;
ALTER TABLE recall_transcripts_v9 RENAME TO recall_transcripts;
ALTER TABLE recall_search_v9 RENAME TO recall_search;
`
	settingsPostgres = `
ALTER TABLE recall_transcripts DROP CONSTRAINT recall_transcripts_sha256_provider_model_idx_fkey;
ALTER TABLE recall_chunks ADD COLUMN settings TEXT NOT NULL DEFAULT '';
ALTER TABLE recall_chunks DROP CONSTRAINT recall_chunks_pkey, ADD PRIMARY KEY (sha256, provider, model, settings, idx);
ALTER TABLE recall_transcripts ADD COLUMN settings TEXT NOT NULL DEFAULT '';
ALTER TABLE recall_transcripts DROP CONSTRAINT recall_transcripts_pkey, ADD PRIMARY KEY (sha256, provider, model, settings, idx),
	ADD FOREIGN KEY (sha256, provider, model, settings, idx) REFERENCES recall_chunks (sha256, provider, model, settings, idx) ON UPDATE CASCADE;
ALTER TABLE recall_search ADD COLUMN settings TEXT NOT NULL DEFAULT '';
DROP INDEX recall_search_chunk;
CREATE INDEX recall_search_chunk ON recall_search (sha256, provider, model, settings, idx);
`

	// A transcript keeps the language its provider detected, or the one
	// asked for (version 10); empty for transcripts kept before.
	languageSQL = `
ALTER TABLE recall_transcripts ADD COLUMN language TEXT NOT NULL DEFAULT '';
`
)

// activitySQL is version 11: what each run or add is doing now, for the
// console, which reads only the database. A row is one recording a run is
// working on (subject, its content), or an add's counts (an empty subject); its
// writer keeps it fresh, and deletes it when done. A killed writer's rows
// stop being touched: readers pass over those not updated for a while,
// and the next run deletes them. done and total measure the stage: the
// audio converted, in microseconds, or the files hashed of those found.
const activitySQL = `
CREATE TABLE recall_activity (
	worker     TEXT NOT NULL,
	batch      TEXT NOT NULL,
	subject    TEXT NOT NULL,
	path       TEXT NOT NULL DEFAULT '',
	stage      TEXT NOT NULL,
	chunk      INTEGER NOT NULL DEFAULT 0,
	chunks     INTEGER NOT NULL DEFAULT 0,
	done       BIGINT NOT NULL DEFAULT 0,
	total      BIGINT NOT NULL DEFAULT 0,
	bytes      BIGINT NOT NULL DEFAULT 0,
	detail     TEXT NOT NULL DEFAULT '',
	since      BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (worker, batch, subject)
);
CREATE INDEX recall_activity_batch ON recall_activity (batch, updated_at);
`

// migrations are the archive's schema changes, for sqlstore.Open.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{
		{Component: component, Version: 1, Name: "batches, contents and items", SQLite: itemsSQL, Postgres: itemsSQL},
		{Component: component, Version: 2, Name: "chunks and transcripts", SQLite: chunksSQL, Postgres: chunksSQL},
		{Component: component, Version: 3, Name: "full-text search", SQLite: searchSQLite, Postgres: searchPostgres},
		{Component: component, Version: 4, Name: "budget changes and refusals", SQLite: budgetSQL, Postgres: budgetSQL},
		{Component: component, Version: 5, Name: "transcripts by provider and model", SQLite: transcriberSQLite, Postgres: transcriberPostgres},
		{Component: component, Version: 6, Name: "timing, paths as given, the sandbox's money apart", SQLite: sixSQL, Postgres: sixSQL},
		{Component: component, Version: 7, Name: "the archive's name", SQLite: archiveSQL, Postgres: archiveSQL},
		{Component: component, Version: 8, Name: "speakers' names; the search index by speaker", SQLite: speakersSQLite, Postgres: speakersPostgres},
		{Component: component, Version: 9, Name: "transcripts by their settings", SQLite: settingsSQLite, Postgres: settingsPostgres},
		{Component: component, Version: 10, Name: "the transcripts' language", SQLite: languageSQL, Postgres: languageSQL},
		{Component: component, Version: 11, Name: "work in progress", SQLite: activitySQL, Postgres: activitySQL},
	}
}
