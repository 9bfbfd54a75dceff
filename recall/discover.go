package recall

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// mediaExts are extensions of audio and video files. A file with one is
// probed, and a failed probe is reported: a ".mp3" that is not audio is a
// problem worth telling.
var mediaExts = setOf(".mp3", ".wav", ".m4a", ".mp4", ".m4v", ".mov", ".mkv", ".webm", ".ogg", ".oga",
	".opus", ".flac", ".aac", ".wma", ".wmv", ".avi", ".mpeg", ".mpg", ".mpga", ".3gp", ".amr", ".aiff",
	".aif", ".caf", ".ts", ".mts", ".m2ts", ".flv", ".ac3", ".mka", ".aifc", ".dv", ".vob")

// ignoredExts are files that are never media; they are passed over without
// probing.
var ignoredExts = setOf(".txt", ".md", ".pdf", ".doc", ".docx", ".odt", ".rtf", ".srt", ".vtt", ".json",
	".xml", ".csv", ".html", ".htm", ".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".svg", ".bmp",
	".tif", ".tiff", ".zip", ".gz", ".tar", ".7z", ".rar", ".ini", ".log", ".db", ".sqlite", ".exe",
	".dll", ".so", ".py", ".go", ".js", ".css", ".ds_store", ".lnk", ".url", ".nfo", ".cue", ".m3u", ".pls")

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// candidate is a file discovery found.
type candidate struct {
	// path is the file's real path: absolute, through every symbolic
	// link, so that it names the file wherever recall-archive runs and
	// however it was reached; shown is the path it was reached by, made
	// absolute, for display.
	path, shown string
	// expected is true when the extension says media: a failed probe is
	// then an error rather than a file to pass over.
	expected bool
	// ignored is true when the extension says the file is not media: it is
	// counted and passed over without probing.
	ignored bool
}

// problem is something discovery could not use, with why.
type problem struct {
	path string
	err  error
}

// discover walks roots, following symbolic links to directories without
// looping, and reports every file that may be media, and every path it
// could not read. It never stops at a bad path.
func discover(roots []string, found func(candidate), bad func(problem)) {
	d := &discovery{found: found, bad: bad, seen: map[fileID]string{}, files: map[string]bool{}}
	for _, root := range roots {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
		info, err := os.Stat(root)
		if err != nil {
			bad(problem{root, describeOpenError(root, err)})
			continue
		}
		if info.IsDir() {
			d.dir(root, info, nil)
			continue
		}
		d.file(root, info)
	}
}

type discovery struct {
	found func(candidate)
	bad   func(problem)
	// seen maps each directory walked to the path it was first walked at.
	seen map[fileID]string
	// files are the real paths of the files found.
	files map[string]bool
}

// dir walks one directory; ancestors are the directories above it on the
// current path, to tell a loop from a directory reached twice.
func (d *discovery) dir(path string, info os.FileInfo, ancestors map[fileID]bool) {
	id, ok := idOf(info)
	if ok {
		if ancestors[id] {
			d.bad(problem{path, fmt.Errorf("symbolic link loop: %s leads back to %s, which contains it", path, d.seen[id])})
			return
		}
		if _, done := d.seen[id]; done {
			return // reached again by another link: already walked
		}
		d.seen[id] = path
		next := make(map[fileID]bool, len(ancestors)+1)
		for k := range ancestors {
			next[k] = true
		}
		next[id] = true
		ancestors = next
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		d.bad(problem{path, fmt.Errorf("cannot list directory %s: %w", path, err)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		info, err := os.Stat(p) // follows links
		if err != nil {
			if e.Type()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				d.bad(problem{p, fmt.Errorf("broken symbolic link %s → %s", p, target)})
			} else {
				d.bad(problem{p, describeOpenError(p, err)})
			}
			continue
		}
		if info.IsDir() {
			d.dir(p, info, ancestors)
			continue
		}
		d.file(p, info)
	}
}

func (d *discovery) file(path string, info os.FileInfo) {
	if !info.Mode().IsRegular() {
		return // devices, sockets, pipes
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if d.files[real] {
		return // the same file, by another path
	}
	d.files[real] = true
	ext := strings.ToLower(filepath.Ext(path))
	ignored := ignoredExts[ext] || strings.HasPrefix(filepath.Base(path), "._") // macOS resource forks
	c := candidate{path: real, expected: mediaExts[ext], ignored: ignored}
	if path != real {
		c.shown = path
	}
	d.found(c)
}

func describeOpenError(path string, err error) error {
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("%s does not exist", path)
	case os.IsPermission(err):
		return fmt.Errorf("%s cannot be read: permission denied", path)
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}
