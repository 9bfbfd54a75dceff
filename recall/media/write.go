package media

import (
	"context"
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
var ErrBusy = errors.New("media: the file is being made by another writer")

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

// writeOnce makes dst with write, given the name of a partial file to
// write, unless dst exists. Writers of the same dst take turns through its
// lock file: one makes dst, the others find it made. With wait false,
// writeOnce returns ErrBusy instead of waiting for another writer.
func writeOnce(ctx context.Context, dst string, wait bool, write func(tmp string) error) error {
	var unlock func()
	for {
		u, ok, err := tryLock(dst + lockSuffix)
		if err != nil {
			return fmt.Errorf("media: cannot lock %s: %w", dst, err)
		}
		if ok {
			unlock = u
			break
		}
		if !wait {
			return fmt.Errorf("%w: %s", ErrBusy, dst)
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
		return err
	}
	st, err := os.Stat(tmp)
	if err == nil && st.Size() == 0 {
		err = fmt.Errorf("media: %s came out empty", dst)
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
