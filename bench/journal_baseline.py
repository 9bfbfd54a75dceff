#!/usr/bin/env python3
"""The journal benchmark's baseline: the same durable pairs, written by
Python's sqlite3 module (SQLite's C library) with no layer in between.

It creates rubicon's own SQLite schema (sqlstore/schema/core_sqlite_*.sql)
in WAL mode with synchronous=FULL, records PAIRS pending operations
(untimed), then each of WORKERS threads, on a connection of its own, claims
10 operations at a time and, for each, commits the sending transition and
then the outcome, each in its own transaction, as the journal does: read
the operation, update it, append an audit entry, commit. It prints the
pairs per second of the timed part.

    python3 bench/journal_baseline.py --db /tmp/b.db --pairs 3000 --workers 1
"""

import argparse
import os
import sqlite3
import threading
import time

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sqlstore", "schema")
LEASE_US = 30_000_000


def connect(path):
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA busy_timeout=30000")
    return db


def now_us():
    return time.time_ns() // 1000


def setup(path, pairs):
    db = connect(path)
    versions = sorted(int(n[len("core_sqlite_"):-len(".sql")]) for n in os.listdir(SCHEMA) if n.startswith("core_sqlite_"))
    for v in versions:
        with open(os.path.join(SCHEMA, "core_sqlite_%d.sql" % v)) as f:
            db.executescript(f.read())
    t = now_us()
    db.execute("BEGIN IMMEDIATE")
    for i in range(pairs):
        key = "op-%07d" % i
        db.execute("INSERT INTO rubicon_operations (key, kind, subject, state, evidence, created_at, updated_at) "
                   "VALUES (?, 'charge', '', 'pending', '{}', ?, ?)", (key, t, t))
        db.execute("INSERT INTO rubicon_audit (op_key, from_state, to_state, at, actor, reason, evidence) "
                   "VALUES (?, '', 'pending', ?, 'journal', 'recorded', '{}')", (key, t))
    db.execute("COMMIT")
    db.close()


def transition(db, key, worker, want, to, attempts_delta, reason):
    """One durable transition, as the journal makes it."""
    db.execute("BEGIN IMMEDIATE")
    row = db.execute("SELECT state, attempts, worker FROM rubicon_operations WHERE key = ?", (key,)).fetchone()
    if row is None or row[0] != want or row[2] != worker:
        db.execute("ROLLBACK")
        raise RuntimeError("%s: %r, want %s held by %s" % (key, row, want, worker))
    t = now_us()
    lease = t + LEASE_US if to == "sending" else None
    db.execute("UPDATE rubicon_operations SET state = ?, attempts = ?, lease_expires_at = ?, updated_at = ? WHERE key = ?",
               (to, row[1] + attempts_delta, lease, t, key))
    db.execute("INSERT INTO rubicon_audit (op_key, from_state, to_state, at, actor, reason, evidence) "
               "VALUES (?, ?, ?, ?, ?, ?, '{}')", (key, want, to, t, worker, reason))
    db.execute("COMMIT")


def work(path, name, errors):
    db = connect(path)
    try:
        while True:
            t = now_us()
            db.execute("BEGIN IMMEDIATE")
            keys = [r[0] for r in db.execute(
                "UPDATE rubicon_operations SET worker = ?, lease_expires_at = ?, updated_at = ? "
                "WHERE key IN (SELECT key FROM rubicon_operations WHERE kind = 'charge' AND state = 'pending' "
                "AND (lease_expires_at IS NULL OR lease_expires_at <= ?) ORDER BY created_at, key LIMIT 10) RETURNING key",
                (name, t + LEASE_US, t, t)).fetchall()]
            db.execute("COMMIT")
            if not keys:
                return
            for key in sorted(keys):
                transition(db, key, name, "pending", "sending", 1, "attempt about to be sent")
                transition(db, key, name, "sending", "applied", 0, "applied")
    except Exception as e:  # reported by the main thread
        errors.append(e)
    finally:
        db.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="database file to create (must not exist)")
    p.add_argument("--pairs", type=int, default=3000)
    p.add_argument("--workers", type=int, default=1)
    a = p.parse_args()
    setup(a.db, a.pairs)
    errors = []
    threads = [threading.Thread(target=work, args=(a.db, "w%d" % w, errors)) for w in range(a.workers)]
    start, cpu0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    if errors:
        raise SystemExit("journal_baseline: %s" % errors[0])
    db = connect(a.db)
    done = db.execute("SELECT COUNT(*) FROM rubicon_operations WHERE state = 'applied'").fetchone()[0]
    db.close()
    if done != a.pairs:
        raise SystemExit("journal_baseline: %d of %d operations applied" % (done, a.pairs))
    print("pairs %d workers %d seconds %.6f pairs/s %.1f cpu-seconds %.6f" % (a.pairs, a.workers, elapsed, a.pairs / elapsed, cpu))


if __name__ == "__main__":
    main()
