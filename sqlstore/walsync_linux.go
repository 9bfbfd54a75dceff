package sqlstore

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// SQLite's synchronous=FULL syncs the write-ahead log after every commit.
// modernc.org/sqlite is built without HAVE_FDATASYNC, so that sync is an
// fsync, which also commits the log file's new timestamps to the file
// system's journal: a second write to the disk on every commit. On Linux,
// sqlstore therefore runs SQLite's writer in NORMAL, which syncs the log at
// checkpoints only, and after each commit syncs the log itself with
// fdatasync, as SQLite does when built with it: the same guarantee (a
// commit is on the disk when Update returns), without the journal write.

// walSyncer syncs a database's write-ahead log.
type walSyncer struct {
	path string

	mu  sync.Mutex
	f   *os.File
	ino uint64
	dev uint64
}

// syncsWAL reports whether sqlstore syncs the log itself here.
const syncsWAL = true

func newWALSyncer(dbPath string) *walSyncer { return &walSyncer{path: dbPath + "-wal"} }

// sync makes every commit written to the log so far durable.
func (w *walSyncer) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	// SQLite may have replaced the log while no connection held it (never
	// while ours is open, but a sync must not go to a stale file).
	var st unix.Stat_t
	if err := unix.Stat(w.path, &st); err != nil {
		return fmt.Errorf("sqlstore: syncing the write-ahead log %s: %w", w.path, err)
	}
	if w.f == nil || st.Ino != w.ino || st.Dev != w.dev {
		if w.f != nil {
			w.f.Close()
		}
		f, err := os.OpenFile(w.path, os.O_RDWR, 0)
		if err != nil {
			w.f = nil
			return fmt.Errorf("sqlstore: syncing the write-ahead log: %w", err)
		}
		var fst unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &fst); err != nil {
			f.Close()
			return fmt.Errorf("sqlstore: syncing the write-ahead log %s: %w", w.path, err)
		}
		w.f, w.ino, w.dev = f, fst.Ino, fst.Dev
		if fst.Ino != st.Ino || fst.Dev != st.Dev {
			return errors.New("sqlstore: the write-ahead log " + w.path + " was replaced while it was being synced")
		}
	}
	for {
		err := unix.Fdatasync(int(w.f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("sqlstore: syncing the write-ahead log %s: %w", w.path, err)
			}
			return nil
		}
	}
}

func (w *walSyncer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}
