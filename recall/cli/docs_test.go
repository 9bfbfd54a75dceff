package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
)

// docRun is the run docs/recall-archive.md shows at the terminal: four
// interviews, a budget of $0.25, Ctrl-C while the last two convert, then
// a run that resumes. It is played through the display and the report on
// a clock moved by hand.
type docRun struct {
	t     *testing.T
	out   bytes.Buffer
	d     *display
	clock *fakeClock
	money recall.Money
}

type docRecording struct {
	path  string
	audio time.Duration
	cost  ledger.Amount
}

var docRecordings = []docRecording{
	{"talks/interview 1.mp3", 5*time.Minute + 10*time.Second, 31_000},
	{"talks/interview 2.mp3", 7*time.Minute + 52*time.Second, 47_200},
	{"talks/interview 3.mp3", 8*time.Minute + 1*time.Second, 48_100},
	{"talks/interview 4.mp3", 9*time.Minute + 1*time.Second, 54_100},
}

func newDocRun(t *testing.T, tty bool, already int, left []docRecording, money recall.Money) *docRun {
	r := &docRun{t: t, money: money}
	var audio time.Duration
	for _, rec := range left {
		audio += rec.audio
	}
	r.d = newDisplay(&r.out, len(docRecordings), already, audio, func() (recall.Money, error) { return r.money, nil })
	r.clock = &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	r.d.now, r.d.started, r.d.tty = r.clock.now, r.clock.t, tty
	r.d.width = func() int { return 120 }
	return r
}

func (r *docRun) wait(d time.Duration) { r.clock.t = r.clock.t.Add(d) }

// convert tells the display how far ffmpeg is with rec's proxy.
func (r *docRun) convert(rec docRecording, share float64) {
	r.d.step(recall.Progress{SHA256: rec.path, Path: rec.path, Stage: recall.StageConverting, Duration: rec.audio,
		Converted: time.Duration(share * float64(rec.audio))})
}

func (r *docRun) step(rec docRecording, stage recall.Stage) {
	p := recall.Progress{SHA256: rec.path, Path: rec.path, Stage: stage}
	switch stage {
	case recall.StageSending:
		p.Chunk, p.Chunks, p.Cost = 1, 1, rec.cost
		r.money.Held += rec.cost
	case recall.StageWaiting:
		p.Chunk, p.Chunks, p.Cost = 1, 1, rec.cost
	case recall.StageAnswered:
		p.Chunk, p.Chunks, p.Cost, p.Duration, p.State = 1, 1, rec.cost, rec.audio, journal.Applied
		r.money.Held -= rec.cost
		r.money.Spent += rec.cost
	case recall.StageFinished:
		p.Outcome = "done"
	}
	r.d.refreshMoney()
	r.d.step(p)
}

// transcribe plays one recording's request, answered after took.
func (r *docRun) transcribe(rec docRecording, took time.Duration) {
	r.step(rec, recall.StageSending)
	r.step(rec, recall.StageWaiting)
	r.wait(took)
	r.step(rec, recall.StageAnswered)
	r.step(rec, recall.StageFinished)
}

func (r *docRun) screen() string {
	r.d.refreshMoney()
	return strings.Join(r.d.render(r.clock.now(), 120), "\n") + "\n"
}

var terminalControl = regexp.MustCompile("\033\\[[0-9]*[A-Z]|\r")

// printed is what the display wrote since the last call, as it stays on
// the terminal.
func (r *docRun) printed() string {
	s := terminalControl.ReplaceAllString(r.out.String(), "")
	r.out.Reset()
	return s
}

func TestDocsTerminal(t *testing.T) {
	one, two, three, four := docRecordings[0], docRecordings[1], docRecordings[2], docRecordings[3]

	// The first run, six seconds in.
	r := newDocRun(t, true, 0, docRecordings, recall.Money{Budget: 250_000})
	r.wait(time.Second)
	r.step(two, recall.StageConverting)
	r.step(one, recall.StageConverting)
	r.wait(5 * time.Second)
	r.convert(two, 0.62)
	r.convert(one, 0.91)
	doccheck.Transcript(t, "recall-terminal-start", r.screen())

	// Both answered; Ctrl-C while the last two convert.
	r.transcribe(two, 2*time.Second)
	r.step(three, recall.StageConverting)
	r.transcribe(one, time.Second)
	r.step(four, recall.StageConverting)
	r.wait(2 * time.Second)
	r.d.draw()
	r.printed()
	r.d.interrupt(10*time.Minute, 30*time.Second)
	r.d.close()
	printRun(&r.out, recall.RunReport{Batch: "talks", Paid: 2, Done: 2, Waiting: 2}, r.money, "", true)
	doccheck.Transcript(t, "recall-terminal-interrupt", "^C\n"+r.printed())

	// The next run resumes within the budget; the run tells the display
	// of the recordings done before as it comes to them.
	r = newDocRun(t, true, 2, docRecordings[2:], r.money)
	r.step(one, recall.StageFinished)
	r.step(two, recall.StageFinished)
	r.transcribe(three, 8*time.Second)
	r.step(four, recall.StageSending)
	r.step(four, recall.StageWaiting)
	r.wait(time.Second)
	resumed := r.screen()
	r.wait(2 * time.Second)
	r.step(four, recall.StageAnswered)
	r.step(four, recall.StageFinished)
	r.d.draw()
	r.printed()
	r.d.close()
	printRun(&r.out, recall.RunReport{Batch: "talks", Paid: 2, Done: 4}, r.money, "", false)
	doccheck.Transcript(t, "recall-terminal-resume", resumed+"...\n"+r.printed())

	// The same run, with standard error not a terminal.
	spent := r.money.Spent - three.cost - four.cost
	r = newDocRun(t, false, 2, docRecordings[2:], recall.Money{Budget: 250_000, Spent: spent})
	r.step(one, recall.StageFinished)
	r.step(two, recall.StageFinished)
	r.step(three, recall.StageSending)
	r.step(three, recall.StageWaiting)
	r.step(three, recall.StageAnswered)
	doccheck.Transcript(t, "recall-terminal-lines", r.printed())
}
