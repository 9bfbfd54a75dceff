package recall_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall"
)

// TestSettlerWaitsUntilAFileStopsGrowing: a file is handed on once its
// size and time have not changed for Quiet, once; a file written to again
// is handed on again once it settles anew; hidden files and partial
// downloads never are.
func TestSettlerWaitsUntilAFileStopsGrowing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(data); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s := &recall.Settler{Root: dir, Quiet: 10 * time.Second}
	now := time.Now()
	scan := func(after time.Duration) ([]string, int) {
		t.Helper()
		now = now.Add(after)
		settled, changing, err := s.Scan(now)
		if err != nil {
			t.Fatal(err)
		}
		return settled, changing
	}
	talk := write("talks/talk.mp3", "first part")
	write(".hidden.mp3", "x")
	write("talks/next.mp3.part", "x")
	write("talks/copy.mp3.crdownload", "x")
	write(".sync/inside.mp3", "x")
	if settled, changing := scan(0); len(settled) != 0 || changing != 1 {
		t.Fatalf("first scan: settled %v, %d changing; want nothing settled, 1 changing", settled, changing)
	}
	if settled, _ := scan(5 * time.Second); len(settled) != 0 {
		t.Fatalf("settled after 5 s of 10: %v", settled)
	}
	// The recorder writes more: the quiet time starts again.
	write("talks/talk.mp3", ", second part")
	os.Chtimes(talk, now.Add(time.Second), now.Add(time.Second))
	if settled, changing := scan(6 * time.Second); len(settled) != 0 || changing != 1 {
		t.Fatalf("a file that grew: settled %v, %d changing", settled, changing)
	}
	if settled, _ := scan(9 * time.Second); len(settled) != 0 {
		t.Fatalf("settled 9 s after it last grew: %v", settled)
	}
	settled, changing := scan(2 * time.Second)
	if !slices.Equal(settled, []string{talk}) || changing != 0 {
		t.Fatalf("11 s unchanged: settled %v, %d changing; want [%s]", settled, changing, talk)
	}
	if !s.Still(talk) {
		t.Error("Still: false for a file as it settled")
	}
	if settled, _ := scan(time.Minute); len(settled) != 0 {
		t.Fatalf("handed on twice: %v", settled)
	}
	// Written to after it settled: not still, and settled again later.
	write("talks/talk.mp3", ", a third")
	os.Chtimes(talk, now.Add(time.Minute), now.Add(time.Minute))
	if s.Still(talk) {
		t.Error("Still: true for a file written to since it settled")
	}
	scan(time.Second)
	if settled, _ := scan(11 * time.Second); !slices.Equal(settled, []string{talk}) {
		t.Fatalf("after it changed and settled again: %v", settled)
	}
	// Unsettle hands a file on again: for one that could not be added.
	s.Unsettle(talk)
	if settled, _ := scan(time.Second); !slices.Equal(settled, []string{talk}) {
		t.Fatalf("after Unsettle: %v", settled)
	}
}

func TestSettlerNamesAMissingFolder(t *testing.T) {
	s := &recall.Settler{Root: filepath.Join(t.TempDir(), "gone"), Quiet: time.Second}
	if _, _, err := s.Scan(time.Now()); err == nil {
		t.Fatal("a folder that does not exist was scanned without an error")
	}
}
