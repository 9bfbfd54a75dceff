-- rubicon core schema, version 2, PostgreSQL: claims look only at pending
-- operations, and recovery only at sending ones; partial indexes hold just
-- those, so that a transition updates at most the two it moves between,
-- and a finished operation none.
DROP INDEX rubicon_operations_claim;
DROP INDEX rubicon_operations_lease;
CREATE INDEX rubicon_operations_pending ON rubicon_operations (kind, created_at, key) WHERE state = 'pending';
CREATE INDEX rubicon_operations_sending ON rubicon_operations (lease_expires_at, key) WHERE state = 'sending';
