-- rubicon core schema, version 4, PostgreSQL: a lease names the journal
-- it was taken through, so that two processes given the same worker name
-- never act on each other's leases.
ALTER TABLE rubicon_operations ADD COLUMN instance TEXT NOT NULL DEFAULT '';
