-- rubicon core schema, version 5, SQLite and PostgreSQL alike: an
-- operation may hold a guard while it is open (pending, sending,
-- ambiguous), which no other open operation may hold at the same time, and
-- name its effect by a replay key, by which an applied one is found again.
ALTER TABLE rubicon_operations ADD COLUMN guard TEXT;
ALTER TABLE rubicon_operations ADD COLUMN replay TEXT;
CREATE UNIQUE INDEX rubicon_operations_guard ON rubicon_operations (guard)
	WHERE guard IS NOT NULL AND state IN ('pending', 'sending', 'ambiguous');
CREATE INDEX rubicon_operations_replay ON rubicon_operations (replay, updated_at)
	WHERE replay IS NOT NULL AND state = 'applied';
