package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// ErrBusy reports a file that another writer, in this process or another
// on the same machine, is making now.
var ErrBusy = errors.New("the file is being made by another writer")

// partialSuffix ends the name of a file being written. Each writer writes
// its own, named dst.WRITER.partial, and renames it to dst when it is
// whole, so that dst is always whole or absent.
const partialSuffix = ".partial"

// lockSuffix ends the name of the lock file that the writer of a file
// holds while making it. Lock files are kept: removing one while another
// writer waits for it would let two writers hold "the" lock.
const lockSuffix = ".lock"

// writes numbers this process's partial files.
var writes atomic.Uint64

// partialName is a partial file of dst that no other writer uses.
func partialName(dst string) string {
	return fmt.Sprintf("%s.%d-%d%s", dst, os.Getpid(), writes.Add(1), partialSuffix)
}

// lockPoll is how often a writer waiting for another one looks again.
const lockPoll = 50 * time.Millisecond

// defaultStale is Tools.LockStale's default. The holder of a lock beats
// (touches the lock file) 15 times as often; a holder whose beat stopped
// for as long (a process stopped, or on a machine that went to sleep) is
// taken over: the waiter writes the file itself, as its own partial file,
// renamed over dst when whole; whoever renames last leaves the same
// content. A waiter says whom it waits for three times as often.
const defaultStale = 30 * time.Second

// holder is who holds a lock, as its lock file says.
type holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// Noticer is told, in a sentence, what a writer waits for and what it
// does about it.
type Noticer func(notice string)

type noticeKey struct{}

// WithNotices returns ctx with n, which the writers of files under ctx
// tell when they wait for another writer, and when they take its work
// over.
func WithNotices(ctx context.Context, n Noticer) context.Context {
	return context.WithValue(ctx, noticeKey{}, n)
}

func notify(ctx context.Context, format string, args ...any) {
	if n, ok := ctx.Value(noticeKey{}).(Noticer); ok && n != nil {
		n(fmt.Sprintf(format, args...))
	}
}

// describe names the holder of lock for a message.
func describe(lock string) (string, time.Time) {
	var h holder
	b, _ := os.ReadFile(lock)
	st, err := os.Stat(lock)
	beat := time.Time{}
	if err == nil {
		beat = st.ModTime()
	}
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return "another writer", beat
	}
	who := fmt.Sprintf("process %d on %s (since %s)", h.PID, h.Host, h.Since.Format(time.RFC3339))
	if host, _ := os.Hostname(); host == h.Host {
		if state := processState(h.PID); state != "" {
			who += ", " + state
		}
	}
	return who, beat
}

// hold writes who holds lock into it, and beats every beat until stop is
// called.
func hold(lock string, beat time.Duration) (stop func()) {
	host, _ := os.Hostname()
	b, _ := json.Marshal(holder{PID: os.Getpid(), Host: host, Since: time.Now()})
	os.WriteFile(lock, b, 0o600)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				os.Chtimes(lock, now, now)
			}
		}
	}()
	return func() { close(done) }
}

// writeOnce makes dst with write, given the name of a partial file to
// write, unless dst exists. Writers of the same dst take turns through its
// lock file: one makes dst, the others find it made. With wait false,
// writeOnce returns ErrBusy instead of waiting for another writer. A
// waiting writer tells the Noticer of ctx whom it waits for, and takes the
// work over from a holder whose beat stopped for stale (0: the default).
func writeOnce(ctx context.Context, dst string, wait bool, stale time.Duration, write func(tmp string) error) error {
	if stale <= 0 {
		stale = defaultStale
	}
	lock := dst + lockSuffix
	unlock := func() {}
	var told time.Time
	var lastStale bool
	for {
		u, ok, err := tryLock(lock)
		if err != nil {
			return fmt.Errorf("cannot lock %s: %w", dst, err)
		}
		if ok {
			stop := hold(lock, stale/15)
			unlock = func() { stop(); u() }
			break
		}
		if !wait {
			return fmt.Errorf("%w: %s", ErrBusy, dst)
		}
		if _, err := os.Stat(dst); err == nil {
			return nil // made meanwhile
		}
		who, beat := describe(lock)
		// Stale twice in a row: a writer that has just taken the lock
		// beats at once, after the lock file shows the last one's beat.
		wasStale := lastStale
		lastStale = !beat.IsZero() && time.Since(beat) > stale
		if lastStale && wasStale {
			notify(ctx, "%s has not shown a sign of life for %s while making %s: this run makes it instead",
				who, time.Since(beat).Round(time.Second), filepath.Base(dst))
			break
		}
		if time.Since(told) >= stale/3 {
			notify(ctx, "waiting for %s, which is making %s; it is taken over if it shows no sign of life for %s", who, filepath.Base(dst), stale)
			told = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockPoll):
		}
	}
	defer unlock()
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	tmp := partialName(dst)
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return diskFull(dst, err)
	}
	st, err := os.Stat(tmp)
	if err == nil && st.Size() == 0 {
		err = diskFull(dst, fmt.Errorf("%s came out empty", dst))
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// diskFull returns err, said as a full disk when the disk that holds dst
// has no room left: ffmpeg's output then ends short, or empty.
func diskFull(dst string, err error) error {
	if free, ok := freeSpace(filepath.Dir(dst)); ok && free < minFree {
		return fmt.Errorf("the disk that holds %s is full (%d bytes free): free some space and run again (%w)", filepath.Dir(dst), free, err)
	}
	return err
}

// minFree is the room below which a disk counts as full.
const minFree = 1 << 20

// CleanPartials removes the partial files in dir that no writer is
// writing: those of writers that were killed. It returns how many it
// removed. Writers still at work, in this process or another, keep theirs.
func CleanPartials(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, partialSuffix) {
			continue
		}
		dst := strings.TrimSuffix(name, partialSuffix)
		if i := strings.LastIndexByte(dst, '.'); i > 0 {
			dst = dst[:i] // the writer's part
		}
		unlock, ok, err := tryLock(filepath.Join(dir, dst+lockSuffix))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // being written
		}
		if err := os.Remove(filepath.Join(dir, name)); err == nil {
			removed++
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		unlock()
	}
	return removed, errors.Join(errs...)
}

// StaleLock is how long a lock file must have gone without its holder's
// beat before [CleanLocks] removes it: twice the time after which a
// waiter takes a writer's work over.
const StaleLock = 2 * defaultStale

// CleanLocks removes from dir the lock files that no writer holds and
// that no holder has beaten for StaleLock, and returns how many it
// removed and their bytes. A writer that opened such a file just before
// it went finds the file it was to make made, or makes it as its own
// partial file renamed over it, as a writer that takes the work of a
// stopped one over does: the content is the same whoever renames last.
func CleanLocks(dir string) (removed int, bytes int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), lockSuffix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		st, err := os.Stat(path)
		if err != nil || time.Since(st.ModTime()) < StaleLock {
			continue
		}
		unlock, ok, err := tryLock(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // held
		}
		if err := os.Remove(path); err == nil {
			removed++
			bytes += st.Size()
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		unlock()
	}
	return removed, bytes, errors.Join(errs...)
}
