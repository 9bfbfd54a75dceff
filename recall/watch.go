package recall

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Settler finds the files under a folder that have stopped growing: a
// recorder or a copy still writing a file changes its size or its
// modification time, and a file is only handed on once neither has
// changed for Quiet. It keeps what it saw in memory; after a restart it
// sees every file anew, which costs nothing, since adding a file already
// recorded leaves it as it is.
type Settler struct {
	// Root is the folder watched, with its subfolders.
	Root string
	// Quiet is how long a file must stay unchanged to be settled.
	Quiet time.Duration

	seen map[string]*sighting
}

// sighting is what a Settler knows of one file.
type sighting struct {
	size    int64
	modTime time.Time
	since   time.Time // when the file was first seen as it is now
	handed  bool      // settled as it is now, and handed on
}

// partialSuffixes are the names under which programs write a file before
// renaming it to its own: such a file is never whole.
var partialSuffixes = []string{".part", ".partial", ".crdownload", ".download", ".tmp", ".temp", ".lock", "~"}

// Scan walks the folder at now and returns the files settled since the
// last scan, and how many are still changing. Hidden files and folders,
// and files named as partial downloads, are passed over. A folder that
// cannot be read is an error; a file that vanishes is forgotten.
func (s *Settler) Scan(now time.Time) (settled []string, changing int, err error) {
	if s.seen == nil {
		s.seen = map[string]*sighting{}
	}
	present := map[string]bool{}
	err = filepath.WalkDir(s.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == s.Root {
				return err
			}
			return nil // a subfolder that went away, or that we may not read
		}
		name := d.Name()
		if path != s.Root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || partial(name) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		present[path] = true
		cur := s.seen[path]
		if cur == nil || cur.size != info.Size() || !cur.modTime.Equal(info.ModTime()) {
			s.seen[path] = &sighting{size: info.Size(), modTime: info.ModTime(), since: now}
			changing++
			return nil
		}
		switch {
		case cur.handed:
		case now.Sub(cur.since) >= s.Quiet && info.Size() > 0:
			cur.handed = true
			settled = append(settled, path)
		default:
			changing++
		}
		return nil
	})
	for path := range s.seen {
		if !present[path] {
			delete(s.seen, path)
		}
	}
	return settled, changing, err
}

// Unsettle forgets that path was handed on, so that the next scans
// settle it again: for a file that could not be added this time.
func (s *Settler) Unsettle(path string) {
	if cur := s.seen[path]; cur != nil {
		cur.handed = false
	}
}

// Still reports whether path is as the last scan saw it: checked once
// more just before the file is read, so that a file written to again
// since it settled waits for the next scans.
func (s *Settler) Still(path string) bool {
	cur := s.seen[path]
	info, err := os.Stat(path)
	return cur != nil && err == nil && info.Size() == cur.size && info.ModTime().Equal(cur.modTime)
}

func partial(name string) bool {
	lower := strings.ToLower(name)
	for _, suffix := range partialSuffixes {
		if strings.HasSuffix(lower, suffix) {
			return true
		}
	}
	return false
}
