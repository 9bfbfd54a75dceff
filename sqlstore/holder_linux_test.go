package sqlstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestLockedByAStoppedProcessSaysWho: a SQLite database whose write lock
// a stopped process holds fails a write after the busy timeout with an
// error that names the process and says it is stopped.
func TestLockedByAStoppedProcessSaysWho(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "l.db")
	db, err := sqlstore.Open(context.Background(), path, sqlstore.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	locker := startWorker(t, workerConfig{DSN: path, Mode: "lock"})
	defer func() {
		locker.Process.Kill()
		locker.Wait()
	}()
	if err := locker.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, locker.Process.Pid)
	err = db.Update(context.Background(), func(tx *sqlstore.Tx) error {
		_, err := tx.SQL().ExecContext(context.Background(), `INSERT INTO rubicon_accounts (name, limit_amount) VALUES ('me', 0)`)
		return err
	})
	if !errors.Is(err, sqlstore.ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(locker.Process.Pid)+" (stopped") {
		t.Fatalf("a write while a stopped process holds the lock: %v; want ErrLocked naming process %d, stopped", err, locker.Process.Pid)
	}
}
