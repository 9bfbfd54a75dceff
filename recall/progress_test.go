package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
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
	var converted time.Duration
	w.run(recall.RunOptions{Progress: func(p recall.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Path != w.dir+"/a.mp3" {
			t.Errorf("progress names %q", p.Path)
		}
		if p.Stage == recall.StageConverting {
			if p.Duration < 2*time.Second-100*time.Millisecond || p.Converted > p.Duration {
				t.Errorf("converting %s of %s: want the recording's length and no more than it", p.Converted, p.Duration)
			}
			converted = max(converted, p.Converted)
		}
		// Converting is told again as ffmpeg goes: a stage is a change.
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
			stages = append(stages, p.Stage)
		}
	}})
	if converted < time.Second {
		t.Errorf("ffmpeg's progress told %s of 2 s converted at most", converted)
	}
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
	if st.Items[recording.Failed] != 0 || len(st.Problems) != 0 {
		t.Fatalf("status after the interrupted conversion: %+v", st)
	}
}

// TestAddCountsItsProgress: what Add tells as it goes adds up to what it
// did: every file found, probed and hashed, and every byte read.
func TestAddCountsItsProgress(t *testing.T) {
	dir := t.TempDir()
	var total int64
	for i, name := range []string{"a.mp3", "b.mp3", "sub/c.mp3"} {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		testkit.Tone(t, path, 300+100*i, time.Second)
		st, _ := os.Stat(path)
		total += st.Size()
	}
	a, err := recall.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var p recall.AddProgress
	if _, err := a.Add(context.Background(), "b", []string{dir}, recall.AddOptions{Workers: 2, Progress: &p}); err != nil {
		t.Fatal(err)
	}
	if p.Found.Load() != 3 || p.Probed.Load() != 3 || p.Hashed.Load() != 3 || p.Bytes.Load() != total {
		t.Errorf("progress: found %d, probed %d, hashed %d, %d bytes; want 3, 3, 3 and %d",
			p.Found.Load(), p.Probed.Load(), p.Hashed.Load(), p.Bytes.Load(), total)
	}
}

// TestRunRecordsItsActivity: while a run converts a recording and sends
// its request, the database says so, as the console reads it, with
// the audio converted; once the run is over, its rows are gone.
func TestRunRecordsItsActivity(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
	ctx := context.Background()
	// seen waits until the batch's activity holds a row that ok accepts.
	seen := func(what string, ok func(store.Activity) bool) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			rows, err := w.a.Activity(ctx, "b")
			if err != nil {
				t.Errorf("activity %s: %v", what, err)
				return
			}
			for _, r := range rows {
				if ok(r) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Errorf("activity %s: %+v", what, rows)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var once sync.Once
	var sent sync.Once
	w.run(recall.RunOptions{Workers: 1, Progress: func(p recall.Progress) {
		switch {
		case p.Stage == recall.StageConverting && p.Duration > 0:
			once.Do(func() {
				seen("while converting", func(r store.Activity) bool {
					return r.Subject == p.SHA256 && r.Path == w.dir+"/a.mp3" && r.Stage == "converting" && r.Total == p.Duration.Microseconds() && r.Done <= r.Total
				})
			})
		case p.Stage == recall.StageSending:
			// Told by the worker itself, which waits: the answer
			// cannot end the run meanwhile.
			sent.Do(func() {
				seen("while sending", func(r store.Activity) bool {
					return r.Subject == p.SHA256 && r.Stage == string(recall.StageSending) && r.Chunk == 1 && r.Chunks == 1
				})
			})
		}
	}})
	if rows, err := w.a.Store().Activity(ctx, "", time.Hour); err != nil || len(rows) != 0 {
		t.Errorf("activity after the run: %+v, %v; want none", rows, err)
	}
}

// TestAddRecordsItsActivity: while an add probes and hashes, the database
// holds its counts, as the console reads them; once it is over, nothing.
func TestAddRecordsItsActivity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(t.TempDir(), "base.mp3")
	testkit.Tone(t, base, 440, time.Second, "-ac", "1")
	audio, _ := os.ReadFile(base)
	const n = 24
	for i := range n {
		// Distinct bytes after the audio make distinct contents.
		write(t, filepath.Join(dir, fmt.Sprintf("r%02d.mp3", i)), append(append([]byte(nil), audio...), fmt.Sprintf("%016d", i)...))
	}
	a, err := recall.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	done := make(chan error, 1)
	// One worker probes the files one by one: the add lasts seconds.
	go func() {
		_, err := a.Add(ctx, "b", []string{dir}, recall.AddOptions{Workers: 1})
		done <- err
	}()
	var seen []store.Activity
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		case <-time.After(50 * time.Millisecond):
			rows, err := a.Activity(ctx, "b")
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, rows...)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no activity was recorded while adding")
	}
	for _, r := range seen {
		if r.Stage != recall.StageAdding || r.Subject != "" || r.Path != dir || r.Total < r.Done || r.Total > n || r.Bytes < 0 {
			t.Errorf("the add's activity: %+v", r)
		}
	}
	if last := seen[len(seen)-1]; last.Done == 0 && last.Bytes == 0 && len(seen) > 2 {
		t.Errorf("the add's counts did not move: %+v", seen)
	}
	if rows, err := a.Store().Activity(ctx, "", time.Hour); err != nil || len(rows) != 0 {
		t.Errorf("activity after the add: %+v, %v; want none", rows, err)
	}
}
