package recall_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall"
)

// exported is a JSON transcript's segments and their words.
type exported struct {
	Segments []struct {
		Start float64 `json:"start_seconds"`
		End   float64 `json:"end_seconds"`
		Words []struct {
			Start float64 `json:"start_seconds"`
			End   float64 `json:"end_seconds"`
			Text  string  `json:"text"`
		} `json:"words"`
	} `json:"segments"`
}

func readExported(t *testing.T, pattern string) exported {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	if len(files) != 1 {
		t.Fatalf("%s: %v", pattern, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc exported
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestWordsCarryTheirChunksOffset: a recording sent in three chunks has
// each chunk's words timed from the start of the recording, as its
// segments are: in order, each within its segment.
func TestWordsCarryTheirChunksOffset(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"long.mp3": 25 * time.Second})
	if rep := w.run(recall.RunOptions{MaxChunkBytes: 40_000}); rep.Done != 1 || len(w.sandbox.Charges()) != 3 {
		t.Fatalf("run: %+v, %d charges, want 3", rep, len(w.sandbox.Charges()))
	}
	doc := readExported(t, filepath.Join(w.out, "long.*.json"))
	last := 0.0
	for i, s := range doc.Segments {
		if len(s.Words) == 0 {
			t.Fatalf("segment %d (%g to %g s) has no words", i, s.Start, s.End)
		}
		for _, wd := range s.Words {
			if wd.Start < last || wd.Start < s.Start || wd.End > s.End || wd.End < wd.Start {
				t.Errorf("segment %d, %g to %g s: the word %q from %g to %g s (the previous ended at %g)", i, s.Start, s.End, wd.Text, wd.Start, wd.End, last)
			}
			last = wd.End
		}
	}
	if last < 17 {
		t.Errorf("the last word ends at %g s: the last chunk's words do not carry its offset", last)
	}
}

// TestReconciledTranscriptKeepsItsWords: a charge whose answer was lost
// is settled by asking the sandbox, whose look-up answers the transcript
// with its words; the export keeps them.
func TestReconciledTranscriptKeepsItsWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "1:charge-drop", map[string]time.Duration{"a.mp3": 2 * time.Second})
	if rep := w.run(recall.RunOptions{Provider: w.provider("sandbox")}); rep.Ambiguous != 1 {
		t.Fatalf("run: %+v", rep)
	}
	w.pastLeases()
	if res, err := w.a.Reconcile(context.Background(), "b", w.provider("sandbox")); err != nil || len(res) != 1 {
		t.Fatalf("reconcile: %+v, %v", res, err)
	}
	out := t.TempDir()
	if _, err := w.a.Export(context.Background(), "b", out, []string{"json"}, true); err != nil {
		t.Fatal(err)
	}
	doc := readExported(t, filepath.Join(out, "a.json"))
	if len(doc.Segments) != 1 || len(doc.Segments[0].Words) == 0 || doc.Segments[0].Words[0].Text != "sandbox" {
		t.Fatalf("the reconciled transcript: %+v", doc)
	}
}
