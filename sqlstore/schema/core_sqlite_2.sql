-- rubicon core schema, version 2, SQLite: fewer pages written per
-- transition.
--
-- The audit log needs no AUTOINCREMENT: nothing is ever deleted from it, so
-- a rowid is never reused, and without it no transition writes
-- sqlite_sequence. The table is rebuilt, with its index and triggers.
CREATE TABLE rubicon_audit_v2 (
	id         INTEGER PRIMARY KEY,
	op_key     TEXT NOT NULL REFERENCES rubicon_operations (key),
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	at         INTEGER NOT NULL,
	actor      TEXT NOT NULL,
	reason     TEXT NOT NULL,
	evidence   TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO rubicon_audit_v2 (id, op_key, from_state, to_state, at, actor, reason, evidence)
	SELECT id, op_key, from_state, to_state, at, actor, reason, evidence FROM rubicon_audit;
DROP TABLE rubicon_audit;
ALTER TABLE rubicon_audit_v2 RENAME TO rubicon_audit;
CREATE INDEX rubicon_audit_key ON rubicon_audit (op_key, id);
CREATE TRIGGER rubicon_audit_no_update BEFORE UPDATE ON rubicon_audit
BEGIN
	SELECT RAISE(ABORT, 'rubicon_audit is append-only');
END;
CREATE TRIGGER rubicon_audit_no_delete BEFORE DELETE ON rubicon_audit
BEGIN
	SELECT RAISE(ABORT, 'rubicon_audit is append-only');
END;

-- Claims look only at pending operations, and recovery only at sending
-- ones: partial indexes hold just those, so that a transition touches at
-- most the two it moves between, and a finished operation none.
DROP INDEX rubicon_operations_claim;
DROP INDEX rubicon_operations_lease;
CREATE INDEX rubicon_operations_pending ON rubicon_operations (kind, created_at, key) WHERE state = 'pending';
CREATE INDEX rubicon_operations_sending ON rubicon_operations (lease_expires_at, key) WHERE state = 'sending';
