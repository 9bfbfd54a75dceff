package recall_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
)

// TestProgressStepsAndInterruptedConversion follows a content through a
// run's stages, by its path; then interrupts a run while ffmpeg converts:
// the content waits for the next run, and is not failed (it once was,
// with ffmpeg's "signal: killed" as the reason).
func TestProgressStepsAndInterruptedConversion(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
	var mu sync.Mutex
	var stages []recall.Stage
	w.run(recall.RunOptions{Progress: func(p recall.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Path != w.dir+"/a.mp3" {
			t.Errorf("progress names %q", p.Path)
		}
		stages = append(stages, p.Stage)
	}})
	want := []recall.Stage{recall.StageConverting, recall.StageSending, recall.StageWaiting, recall.StageAnswered, recall.StageFinished}
	if !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}

	w = newWorld(t, "", nil)
	testkit.Tone(t, filepath.Join(w.dir, "long.mp3"), 300, 300*time.Second, "-ac", "1")
	if _, err := w.a.Add(context.Background(), "b", []string{w.dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var outcome string
	rep, err := w.a.Run(ctx, "b", recall.RunOptions{Provider: w.provider("sandbox"), PricePerMinute: 6000, CacheDir: w.cache,
		Progress: func(p recall.Progress) {
			switch p.Stage {
			case recall.StageConverting:
				time.AfterFunc(100*time.Millisecond, cancel)
			case recall.StageFinished:
				outcome = p.Outcome
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || rep.Waiting != 1 || len(rep.Problems) != 0 || outcome != "waiting" {
		t.Fatalf("a run interrupted while converting: %+v, outcome %q; want the content waiting, no problem", rep, outcome)
	}
	st, _ := w.a.Status(context.Background(), "b")
	if st.Items[recall.StateFailed] != 0 || len(st.Problems) != 0 {
		t.Fatalf("status after the interrupted conversion: %+v", st)
	}
}
