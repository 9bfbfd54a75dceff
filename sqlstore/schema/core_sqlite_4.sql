-- rubicon core schema, version 4, SQLite: a lease names the journal it was
-- taken through, so that two processes given the same worker name never
-- act on each other's leases; and the store's clock is anchored once per
-- boot of the host (see clock.go).
ALTER TABLE rubicon_operations ADD COLUMN instance TEXT NOT NULL DEFAULT '';
CREATE TABLE rubicon_clock (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	boot_id TEXT NOT NULL,
	wall_us INTEGER NOT NULL,
	boot_ns INTEGER NOT NULL
);
