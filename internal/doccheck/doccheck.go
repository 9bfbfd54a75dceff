// Package doccheck keeps the examples in the project's documents true.
//
// A fenced block in a Markdown file is marked by an HTML comment on the
// line before it:
//
//	<!-- transcript: NAME -->   what a test produces, compared whole
//	<!-- example: KIND -->      an input a test feeds to the program (a configuration, a prices file)
//
// A transcript that differs from what its test produced fails the test;
// `go test -run NAME -update` rewrites it from the test's output instead,
// so a change of output is reviewed as a change of the document. An
// example that the program refuses fails its test. TestEveryBlockIsMarked
// (in this package's tests) fails when a transcript or a configuration
// block of the documents carries no mark, so nothing shown to a reader is
// left unchecked.
package doccheck

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the documents' transcripts, and the golden files of the tests that ask Update, from what the program prints")

// Update reports whether the tests were run with -update: for the tests
// of a package that keep golden files of their own, since one test binary
// has one flag of that name.
func Update() bool { return *update }

// Block is a marked fenced block of a document.
type Block struct {
	File string // the document's path
	Line int    // the line of the opening fence, from 1
	Mark string // "transcript" or "example"
	Name string // the transcript's name, or the example's kind
	Info string // the fence's info string: text, yaml, json...
	Text string // the block's content, with its final newline

	start, end int // the content's byte range in the file
}

var markRE = regexp.MustCompile(`^<!-- (transcript|example): ([A-Za-z0-9._/-]+) -->$`)

// Parse returns the marked blocks of a Markdown document, and an error
// for a mark that no fenced block follows.
func Parse(file string, data []byte) ([]Block, error) {
	var blocks []Block
	lines := splitLines(data)
	for i := 0; i < len(lines); i++ {
		m := markRE.FindStringSubmatch(strings.TrimSpace(lines[i].text))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !isFence(lines[i+1].text) {
			return nil, fmt.Errorf("%s:%d: the mark %q is not followed by a fenced block (```) on the next line", file, i+1, m[0])
		}
		open := lines[i+1]
		end := -1
		for j := i + 2; j < len(lines); j++ {
			if strings.TrimSpace(lines[j].text) == fence(open.text) {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("%s:%d: the block marked %q is never closed", file, i+2, m[0])
		}
		start, stop := lines[i+2].offset, lines[end].offset
		if end == i+2 {
			start = stop
		}
		blocks = append(blocks, Block{
			File: file, Line: i + 2, Mark: m[1], Name: m[2],
			Info: strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(open.text), "`~")),
			Text: string(data[start:stop]), start: start, end: stop,
		})
		i = end
	}
	return blocks, nil
}

type line struct {
	text   string
	offset int
}

func splitLines(data []byte) []line {
	var lines []line
	for off := 0; off < len(data); {
		n := bytes.IndexByte(data[off:], '\n')
		if n < 0 {
			n = len(data) - off
		}
		lines = append(lines, line{string(data[off : off+n]), off})
		off += n + 1
	}
	return lines
}

func isFence(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~")
}

// fence is the closing fence of an opening one: its run of backticks or
// tildes.
func fence(open string) string {
	open = strings.TrimSpace(open)
	n := len(open) - len(strings.TrimLeft(open, string(open[0])))
	return open[:n]
}

// Root is the repository's root directory, found from this file's place.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Documents are the Markdown files whose blocks are checked: the README
// and docs/*.md, as paths from the root.
func Documents() ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(Root(), "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(Root(), d)
		files = append(files, rel)
	}
	return files, nil
}

// Examples returns every block marked as an example of kind in the
// documents, failing the test when there is none: a test that checks
// nothing must not pass.
func Examples(t testing.TB, kind string) []Block {
	t.Helper()
	return marked(t, "example", kind)
}

// marked returns the documents' blocks with the mark and name, failing
// the test when there is none.
func marked(t testing.TB, mark, name string) []Block {
	t.Helper()
	var found []Block
	for _, b := range all(t) {
		if b.Mark == mark && b.Name == name {
			found = append(found, b)
		}
	}
	if len(found) == 0 {
		t.Fatalf("no document has a block marked <!-- %s: %s -->", mark, name)
	}
	return found
}

// Transcript compares the block marked as transcript name with got. With
// -update it rewrites the block instead. A transcript that no document
// holds fails the test.
func Transcript(t testing.TB, name, got string) {
	t.Helper()
	if got != "" && !strings.HasSuffix(got, "\n") {
		got += "\n"
	}
	for _, b := range marked(t, "transcript", name) {
		if b.Text == got {
			continue
		}
		if *update {
			if err := rewrite(filepath.Join(Root(), b.File), b, got); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s:%d: transcript %s rewritten", b.File, b.Line, name)
			continue
		}
		t.Errorf("%s:%d: transcript %s differs from what the program prints (go test -run %s -update rewrites it):\n--- the document\n%s--- the program\n%s",
			b.File, b.Line, name, t.Name(), b.Text, got)
	}
}

func all(t testing.TB) []Block {
	t.Helper()
	files, err := Documents()
	if err != nil {
		t.Fatal(err)
	}
	var blocks []Block
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := Parse(f, data)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	return blocks
}

// rewrite replaces the block's content in the file at path, reading the
// file again under a lock, so that the rewrites of one file by several
// test processes compose.
func rewrite(path string, b Block, text string) error {
	unlock, err := lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	blocks, err := Parse(b.File, data)
	if err != nil {
		return err
	}
	for _, cur := range blocks {
		if cur.Mark == b.Mark && cur.Name == b.Name && cur.Text == b.Text {
			out := append(append(append([]byte{}, data[:cur.start]...), text...), data[cur.end:]...)
			return os.WriteFile(path, out, 0o644)
		}
	}
	return fmt.Errorf("%s:%d: transcript %s changed while it was being rewritten", b.File, b.Line, b.Name)
}

// Sections returns the text of each section of the document at file (a
// path from the root) whose heading is title, up to the next heading of
// the same level or higher, failing the test when there is none.
func Sections(t testing.TB, file, title string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Root(), file))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level == 0 || strings.TrimSpace(l[level:]) != title {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if n := len(lines[j]) - len(strings.TrimLeft(lines[j], "#")); n > 0 && n <= level && strings.HasPrefix(lines[j][n:], " ") {
				end = j
				break
			}
		}
		found = append(found, strings.Join(lines[i+1:end], "\n"))
	}
	if len(found) == 0 {
		t.Fatalf("%s has no section headed %q", file, title)
	}
	return found
}
