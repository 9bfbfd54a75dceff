-- rubicon core schema, version 1, PostgreSQL. Times are Unix microseconds.
CREATE TABLE rubicon_operations (
	key              TEXT PRIMARY KEY,
	kind             TEXT NOT NULL,
	subject          TEXT NOT NULL DEFAULT '',
	state            TEXT NOT NULL CHECK (state IN ('pending', 'failed_safe', 'sending', 'applied', 'not_applied', 'ambiguous')),
	attempts         INTEGER NOT NULL DEFAULT 0,
	last_phase       TEXT NOT NULL DEFAULT '',
	last_error       TEXT NOT NULL DEFAULT '',
	evidence         JSONB NOT NULL DEFAULT '{}',
	worker           TEXT NOT NULL DEFAULT '',
	lease_expires_at BIGINT,
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL,
	resolution       JSONB
);
CREATE INDEX rubicon_operations_claim ON rubicon_operations (kind, state, created_at);
CREATE INDEX rubicon_operations_subject ON rubicon_operations (kind, subject);
CREATE INDEX rubicon_operations_lease ON rubicon_operations (state, lease_expires_at);

CREATE TABLE rubicon_audit (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	op_key     TEXT NOT NULL REFERENCES rubicon_operations (key),
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	at         BIGINT NOT NULL,
	actor      TEXT NOT NULL,
	reason     TEXT NOT NULL,
	evidence   JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX rubicon_audit_key ON rubicon_audit (op_key, id);
CREATE FUNCTION rubicon_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'rubicon_audit is append-only';
END;
$$;
CREATE TRIGGER rubicon_audit_no_change BEFORE UPDATE OR DELETE ON rubicon_audit
	FOR EACH ROW EXECUTE FUNCTION rubicon_audit_append_only();
CREATE TRIGGER rubicon_audit_no_truncate BEFORE TRUNCATE ON rubicon_audit
	FOR EACH STATEMENT EXECUTE FUNCTION rubicon_audit_append_only();

CREATE TABLE rubicon_accounts (
	name         TEXT PRIMARY KEY,
	unit         TEXT NOT NULL DEFAULT '',
	limit_amount BIGINT NOT NULL CHECK (limit_amount >= 0),
	held         BIGINT NOT NULL DEFAULT 0 CHECK (held >= 0),
	spent        BIGINT NOT NULL DEFAULT 0 CHECK (spent >= 0)
);

CREATE TABLE rubicon_holds (
	id         TEXT PRIMARY KEY,
	account    TEXT NOT NULL REFERENCES rubicon_accounts (name),
	amount     BIGINT NOT NULL CHECK (amount >= 0),
	state      TEXT NOT NULL CHECK (state IN ('held', 'settled', 'voided')),
	settled    BIGINT NOT NULL DEFAULT 0 CHECK (settled >= 0),
	op_key     TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX rubicon_holds_account ON rubicon_holds (account, state);
