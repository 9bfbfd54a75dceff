package recall_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall"
)

// TestParseTranscript: the provider's JSON keeps its timestamps, plain
// text is one segment, and a file that holds no text, or not text, is
// refused with what to give instead.
func TestParseTranscript(t *testing.T) {
	t.Parallel()
	tr, err := recall.ParseTranscript([]byte(`{"text": "one two", "segments": [{"start": 0, "end": 1.5, "text": "one"}, {"start": 1.5, "end": 3, "text": " two"}]}`))
	if err != nil || tr.Text != "one two" || len(tr.Segments) != 2 || tr.Segments[1].Start != 1500*time.Millisecond || tr.Segments[1].Text != "two" {
		t.Errorf("the provider's JSON: %+v, %v", tr, err)
	}
	tr, err = recall.ParseTranscript([]byte("  what the provider said\n"))
	if err != nil || tr.Text != "what the provider said" || len(tr.Segments) != 1 || tr.Segments[0].Text != tr.Text {
		t.Errorf("plain text: %+v, %v", tr, err)
	}
	for in, want := range map[string]string{
		"":           "the transcript is empty",
		" \n\t":      "the transcript is empty",
		"\xff\xfeab": "not UTF-8 text",
	} {
		if _, err := recall.ParseTranscript([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", in, err, want)
		}
	}
}

// TestPlainTranscriptSpansItsChunk resolves an ambiguous request as
// applied with a plain-text transcript, which has no times: its cue runs
// over the whole chunk (it once started and ended at 0, which WebVTT
// parsers reject), and the exported files have the mode the umask gives
// (they were once 0600).
func TestPlainTranscriptSpansItsChunk(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "1:charge-drop", map[string]time.Duration{"a.mp3": 3 * time.Second})
	w.run(recall.RunOptions{})
	amb, err := w.a.Ambiguous(context.Background(), "b")
	if err != nil || len(amb) != 1 {
		t.Fatalf("ambiguous: %+v, %v", amb, err)
	}
	tr, err := recall.ParseTranscript([]byte("what the provider said\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.a.Resolve(context.Background(), amb[0].Key, recall.Decision{Applied: true, Transcript: tr, By: "ana", Note: "charged"}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if n, err := w.a.Export(context.Background(), "b", out, []string{"vtt", "srt"}, true); err != nil || n != 1 {
		t.Fatalf("export: %d, %v", n, err)
	}
	vtts, _ := filepath.Glob(filepath.Join(out, "a.vtt"))
	if len(vtts) != 1 {
		t.Fatalf("exported %v", vtts)
	}
	vtt, _ := os.ReadFile(vtts[0])
	if !strings.Contains(string(vtt), "00:00:00.000 --> 00:00:03.") {
		t.Errorf("the cue does not span the chunk:\n%s", vtt)
	}
	// Any file created 0644 gets the mode the umask leaves.
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(plain)
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	for _, f := range files {
		if got, err := os.Stat(f); err != nil || got.Mode().Perm() != st.Mode().Perm() {
			t.Errorf("%s: mode %v, %v; want %v, as any file written 0644", f, got.Mode().Perm(), err, st.Mode().Perm())
		}
	}
}

// TestExportOfAnUnknownBatchFails: export of a batch never added to
// names it, rather than writing nothing and succeeding.
func TestExportOfAnUnknownBatchFails(t *testing.T) {
	t.Parallel()
	a := openArchive(t, recall.Options{})
	_, err := a.Export(context.Background(), "nosuchbatch", t.TempDir(), recall.Formats, true)
	if !errors.Is(err, recall.ErrNoBatch) || !strings.Contains(err.Error(), `"nosuchbatch"`) {
		t.Fatalf("export of an unknown batch: %v", err)
	}
}
