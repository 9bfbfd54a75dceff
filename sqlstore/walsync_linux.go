package sqlstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
//
// It syncs the file that SQLite writes, and only that file: SQLite keeps
// writing to the log it opened while any connection has it open (ours is
// open for as long as the database), so that a log deleted or replaced by
// another file under its name (by hand, by a tool that cleans up, by
// another process after a deletion) is no longer the one that commits go
// to, and syncing the new file would report them durable while a crash
// would lose them. The first sync checks that every descriptor of this
// process open on the log (SQLite's) is the file the name holds; each sync
// checks that the name still holds it. Either failing stops every later
// commit with an error wrapping ErrLogReplaced.
type walSyncer struct {
	path string

	mu     sync.Mutex
	f      *os.File
	ino    uint64
	dev    uint64
	broken error // sticky: the log was replaced
}

// syncsWAL reports whether sqlstore syncs the log itself here.
const syncsWAL = true

func newWALSyncer(dbPath string) *walSyncer {
	if abs, err := filepath.Abs(dbPath); err == nil {
		dbPath = abs
	}
	return &walSyncer{path: dbPath + "-wal"}
}

// replaced returns the error that stops the database's commits.
func (w *walSyncer) replaced(how string) error {
	w.broken = fmt.Errorf("%w: %s %s while the database was open: SQLite goes on writing to the file it opened, which a crash would lose from the last checkpoint on; stop every process that uses the database, and open it again",
		ErrLogReplaced, w.path, how)
	return w.broken
}

// sync makes every commit written to the log so far durable.
func (w *walSyncer) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	var st unix.Stat_t
	err := unix.Stat(w.path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return w.replaced("was deleted")
	case err != nil:
		return fmt.Errorf("syncing the write-ahead log %s: %w", w.path, err)
	case w.f != nil && (st.Ino != w.ino || st.Dev != w.dev):
		return w.replaced("was replaced by another file")
	}
	if w.f == nil {
		if err := w.open(st); err != nil {
			return err
		}
	}
	for {
		err := unix.Fdatasync(int(w.f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("syncing the write-ahead log %s: %w", w.path, err)
			}
			return nil
		}
	}
}

// open opens the log that the name holds, whose status is st, once it
// has checked that SQLite has that file open, and no other under the name.
func (w *walSyncer) open(st unix.Stat_t) error {
	f, err := os.OpenFile(w.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("syncing the write-ahead log: %w", err)
	}
	var fst unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fst); err != nil {
		f.Close()
		return fmt.Errorf("syncing the write-ahead log %s: %w", w.path, err)
	}
	if fst.Ino != st.Ino || fst.Dev != st.Dev {
		f.Close()
		return w.replaced("was replaced by another file")
	}
	if err := w.checkOpen(int(f.Fd()), fst); err != nil {
		f.Close()
		return err
	}
	w.f, w.ino, w.dev = f, fst.Ino, fst.Dev
	return nil
}

// checkOpen checks that every descriptor of this process open on a file
// named after the log, but mine, is the file st describes.
func (w *walSyncer) checkOpen(mine int, st unix.Stat_t) error {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil // no /proc: the name is all there is to check
	}
	// The kernel names a descriptor's file by its path without symbolic
	// links.
	real := w.path
	if dir, err := filepath.EvalSymlinks(filepath.Dir(w.path)); err == nil {
		real = filepath.Join(dir, filepath.Base(w.path))
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd == mine {
			continue
		}
		link := "/proc/self/fd/" + e.Name()
		target, err := os.Readlink(link)
		if err != nil {
			continue
		}
		target = strings.TrimSuffix(target, " (deleted)")
		if target != w.path && target != real {
			continue
		}
		var ost unix.Stat_t
		if err := unix.Stat(link, &ost); err != nil {
			continue // closed meanwhile
		}
		if ost.Ino != st.Ino || ost.Dev != st.Dev {
			return w.replaced("was deleted or replaced by another file")
		}
	}
	return nil
}

func (w *walSyncer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}
