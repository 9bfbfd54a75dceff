package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestReplacedLogStopsCommits: once the write-ahead log of an open SQLite
// database is deleted, or replaced by another file under its name, no
// commit is reported durable any more: SQLite goes on writing to the file
// it opened, which a crash would lose. The error names the file, and
// stays.
func TestReplacedLogStopsCommits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, how string
		fault     func(wal string) error
	}{
		{"replaced", "replaced by another file", func(wal string) error {
			// As another process does that opens the database after the
			// log was deleted: a new, empty log under the name.
			if err := os.Remove(wal); err != nil {
				return err
			}
			return os.WriteFile(wal, nil, 0o644)
		}},
		{"deleted", "was deleted", os.Remove},
		{"renamed", "was deleted", func(wal string) error { return os.Rename(wal, wal+".old") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "r.db")
			db, err := sqlstore.Open(ctx, path, sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			j := journal.New(db.JournalStore(), journal.Options{})
			insert := func(key string) error {
				_, _, err := j.Insert(ctx, journal.NewOperation{Key: key, Kind: "charge"})
				return err
			}
			if err := insert("before"); err != nil {
				t.Fatal(err)
			}
			if err := tt.fault(path + "-wal"); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"after", "later"} {
				err := insert(key)
				if !errors.Is(err, sqlstore.ErrLogReplaced) || !strings.Contains(err.Error(), path+"-wal") || !strings.Contains(err.Error(), tt.how) {
					t.Fatalf("a commit after the log %s: %v; want ErrLogReplaced naming %s-wal", tt.name, err, path)
				}
			}
		})
	}
}

// TestReplacedLogStopsTheWorker: a worker process whose database's log
// is replaced under it stops with an error naming the file, and sends no
// request after it: no sending commit is reported durable that is not.
func TestReplacedLogStopsTheWorker(t *testing.T) {
	t.Parallel()
	b := backends()[0]
	const n = 400
	q := newQueue(t, b, n)
	q.srv.SetDefault(faultserver.Step{Status: 200, Delay: 2 * time.Millisecond})
	var stderr strings.Builder
	cmd := startWorker(t, workerConfig{DSN: q.dsn, Server: q.srv.URL(), Name: "w", Lease: 30 * time.Second, Stderr: &stderr})
	for len(q.srv.Requests()) < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	wal := q.dsn + "-wal"
	if err := os.Remove(wal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wal, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	replacedAt := len(q.srv.Requests())
	err := cmd.Wait()
	sent := len(q.srv.Requests())
	if err == nil || sent == n || !strings.Contains(stderr.String(), wal) {
		t.Fatalf("the worker went on after its log was replaced: %d of %d requests sent, %v: %s", sent, n, err, stderr.String())
	}
	// At most the request in flight when the log was replaced.
	if sent > replacedAt+1 {
		t.Fatalf("%d requests after the log was replaced (%d before): sending commits were reported durable that were not", sent-replacedAt, replacedAt)
	}
}
