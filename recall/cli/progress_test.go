package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
)

// fakeClock is a display's time, moved by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func testDisplay(out *bytes.Buffer, tty bool) (*display, *fakeClock, *recall.Money) {
	m := &recall.Money{Budget: 20_000}
	d := newDisplay(out, 4, 1, 60*time.Second, func() (recall.Money, error) { return *m, nil })
	c := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	d.now, d.started, d.tty = c.now, c.t, tty
	d.width = func() int { return 100 }
	return d, c, m
}

// TestDisplayOnATerminal renders the bar as a run goes: something before
// the first answer, a recording converting with its time moving, a
// request waiting for its answer, the money from the database, an ETA
// from the rate of answers, and the count reaching the batch's size on a
// resumed run (a recording done by an earlier run counts).
func TestDisplayOnATerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d, c, m := testDisplay(&out, true)
	d.refreshMoney()
	lines := d.render(c.t, 100)
	if !strings.Contains(lines[0], "0/4 recordings") || !strings.Contains(lines[0], "ETA after the first answer") ||
		lines[1] != "  money: spent $0.000000, held $0.000000 of a budget of $0.020000" {
		t.Fatalf("before anything:\n%s", strings.Join(lines, "\n"))
	}
	// The recording an earlier run transcribed is finished at once.
	d.step(recall.Progress{SHA256: "old", Path: "old.mp3", Stage: recall.StageFinished, Outcome: "done"})
	d.step(recall.Progress{SHA256: "a", Path: "talks/a.mp3", Stage: recall.StageConverting})
	c.t = c.t.Add(12 * time.Second)
	d.step(recall.Progress{SHA256: "b", Path: "talks/b.wav", Stage: recall.StageSending, Chunk: 1, Chunks: 2, Duration: 15 * time.Second, Cost: 1500})
	c.t = c.t.Add(time.Second)
	d.step(recall.Progress{SHA256: "b", Path: "talks/b.wav", Stage: recall.StageWaiting, Chunk: 1, Chunks: 2, Duration: 15 * time.Second, Cost: 1500})
	m.Held = 1500
	d.refreshMoney()
	c.t = c.t.Add(2 * time.Second)
	lines = d.render(c.t, 100)
	want := []string{
		"[####............] 1/4 recordings  0:15 elapsed, ETA after the first answer",
		"  money: spent $0.000000, held $0.001500 of a budget of $0.020000",
		"  converting            talks/a.mp3  0:15",
		"  waiting for an answer talks/b.wav chunk 1/2  0:02",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("while converting and waiting:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// 15 s of the 60 s answered in 20 s: 45 s left take 60 s.
	c.t = c.t.Add(5 * time.Second)
	d.step(recall.Progress{SHA256: "b", Path: "talks/b.wav", Stage: recall.StageAnswered, Chunk: 1, Chunks: 2, Duration: 15 * time.Second, State: journal.Applied})
	if lines = d.render(c.t, 100); !strings.Contains(lines[0], "ETA 1:00") || !strings.Contains(lines[3], "answered") {
		t.Fatalf("after an answer:\n%s", strings.Join(lines, "\n"))
	}
	d.step(recall.Progress{SHA256: "b", Stage: recall.StageFinished, Outcome: "done"})
	d.step(recall.Progress{SHA256: "a", Stage: recall.StageFinished, Outcome: "ambiguous"})
	d.step(recall.Progress{SHA256: "c", Stage: recall.StageFinished, Outcome: "done"})
	if lines = d.render(c.t, 100); !strings.HasPrefix(lines[0], "[################] 4/4 recordings (1 ambiguous)") || len(lines) != 2 {
		t.Fatalf("at the end:\n%s", strings.Join(lines, "\n"))
	}
	// Lines are cut to the terminal's width, so that none wraps.
	for _, l := range d.render(c.t, 30) {
		if n := len([]rune(l)); n > 29 {
			t.Errorf("%q: %d characters on a terminal of 30", l, n)
		}
	}
	// Each drawing goes back over the last one.
	out.Reset()
	d.draw()
	d.draw()
	if !strings.Contains(out.String(), "\033[1A\r\033[J[") {
		t.Errorf("the second drawing does not erase the first: %q", out.String())
	}
}

// TestDisplayAsLines: without a terminal, each step is a line with the
// file, the stage, the chunk and the money.
func TestDisplayAsLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d, _, m := testDisplay(&out, false)
	stop := d.start()
	d.step(recall.Progress{SHA256: "a", Path: "talks/a.mp3", Stage: recall.StageConverting})
	m.Held = 700
	d.step(recall.Progress{SHA256: "a", Path: "talks/a.mp3", Stage: recall.StageSending, Chunk: 2, Chunks: 3, Cost: 700})
	m.Held, m.Spent = 0, 700
	d.step(recall.Progress{SHA256: "a", Path: "talks/a.mp3", Stage: recall.StageAnswered, Chunk: 2, Chunks: 3, Cost: 700, State: journal.Applied})
	d.step(recall.Progress{SHA256: "a", Path: "talks/a.mp3", Stage: recall.StageFinished, Outcome: "done"})
	d.step(recall.Progress{SHA256: "x", Path: "talks/x.mp3", Stage: recall.StageFinished, Outcome: "failed", Detail: "ffmpeg: no audio"})
	stop()
	want := `recall-archive: 4 recordings, 1 transcribed before, 1m0s of audio to go; spent $0.000000, held $0.000000 of a budget of $0.020000
recall-archive: [0/4] "talks/a.mp3": converting; spent $0.000000, held $0.000000 of a budget of $0.020000
recall-archive: [0/4] "talks/a.mp3" chunk 2/3: sending, $0.000700 held; spent $0.000000, held $0.000700 of a budget of $0.020000
recall-archive: [0/4] "talks/a.mp3" chunk 2/3: transcribed, $0.000700 spent; spent $0.000700, held $0.000000 of a budget of $0.020000
recall-archive: [2/4] "talks/x.mp3": failed before any payment: ffmpeg: no audio; spent $0.000700, held $0.000000 of a budget of $0.020000
`
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", out.String(), want)
	}
}

// TestInterruptSaysWhatItWaitsFor: the first Ctrl-C is answered with the
// requests in flight, and what a second one does.
func TestInterruptSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d, _, _ := testDisplay(&out, false)
	d.step(recall.Progress{SHA256: "a", Path: "a.mp3", Stage: recall.StageConverting})
	d.step(recall.Progress{SHA256: "b", Path: "b.mp3", Stage: recall.StageWaiting, Chunk: 1, Chunks: 1})
	out.Reset()
	d.interrupt(10*time.Minute, 30*time.Second)
	for _, want := range []string{"interrupted", "Waiting for the 1 request in flight", `"b.mp3" (waiting for an answer)`, "--timeout 10m0s",
		"Ctrl-C again ends the run at once", "ambiguous once --lease 30s runs out"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in %q", want, out.String())
		}
	}
	if strings.Contains(out.String(), "a.mp3") {
		t.Errorf("a conversion is not a request in flight: %q", out.String())
	}
}

// TestConversionShowsItsShare: on a terminal, a recording being converted
// shows how much of it ffmpeg has done; without one, progress within a
// stage writes no line.
func TestConversionShowsItsShare(t *testing.T) {
	var out bytes.Buffer
	d, c, _ := testDisplay(&out, true)
	d.step(recall.Progress{SHA256: "a", Path: "a.mp3", Stage: recall.StageConverting, Duration: time.Minute})
	if lines := d.render(c.t, 100); !strings.HasSuffix(lines[2], "  0%") {
		t.Errorf("before ffmpeg says anything: %q", lines[2])
	}
	d.step(recall.Progress{SHA256: "a", Path: "a.mp3", Stage: recall.StageConverting, Duration: time.Minute, Converted: 27 * time.Second})
	if lines := d.render(c.t, 100); !strings.HasSuffix(lines[2], "  45%") {
		t.Errorf("27 s of 60 converted: %q", lines[2])
	}
	d.step(recall.Progress{SHA256: "b", Path: "b.mp3", Stage: recall.StageConverting})
	for _, l := range d.render(c.t, 100) {
		if strings.Contains(l, "b.mp3") && strings.Contains(l, "%") {
			t.Errorf("a recording of unknown length shows a share: %q", l)
		}
	}

	out.Reset()
	plain, _, _ := testDisplay(&out, false)
	plain.step(recall.Progress{SHA256: "a", Path: "a.mp3", Stage: recall.StageConverting, Duration: time.Minute})
	plain.step(recall.Progress{SHA256: "a", Path: "a.mp3", Stage: recall.StageConverting, Duration: time.Minute, Converted: 30 * time.Second})
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("without a terminal, %d lines for one conversion:\n%s", n, out.String())
	}
}
