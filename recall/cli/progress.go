package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
)

// display shows a run's progress on standard error: on a terminal, a bar
// redrawn in place with the recordings being worked on, their stages, the
// money and an ETA; elsewhere, a line per step. It is told of each step by
// the run's workers (see [recall.Progress]) and reads the money from the
// database, so that it says what the archive says.
type display struct {
	w   io.Writer
	tty bool
	// width returns the terminal's width; lines are cut to it, so that
	// none wraps and the bar is redrawn over itself.
	width func() int
	// money reads where the batch's budget stands.
	money func() (recall.Money, error)
	now   func() time.Time

	mu      sync.Mutex
	started time.Time
	total   int // recordings in the batch
	already int // of which transcribed before the run
	// finished counts the recordings the run is done with, by outcome.
	finished map[string]int
	// audioLeft is the audio not transcribed when the run started, and
	// audioDone what this run got answers for: the ETA's rate.
	audioLeft, audioDone time.Duration
	active               map[string]*activity // by content
	touched              map[string]bool      // contents this run did something with
	lastMoney            recall.Money
	lines                int // lines drawn on the terminal, to draw over
	interrupted          bool
	closed               bool
}

// activity is what the run is doing with one recording.
type activity struct {
	path          string
	stage         recall.Stage
	chunk, chunks int
	// converted is how far ffmpeg is with the recording's proxy, as a
	// share of its audio, or -1 when it is not known.
	converted float64
	since     time.Time
	// detail is what the stage waits for, if it waits.
	detail string
}

// newDisplay returns the display on w of a run of a batch of total
// recordings, already of them transcribed before, with audioLeft of audio
// not transcribed yet.
func newDisplay(w io.Writer, total, already int, audioLeft time.Duration, money func() (recall.Money, error)) *display {
	d := &display{w: w, width: func() int { return 80 }, money: money, now: time.Now, total: total, already: already,
		audioLeft: audioLeft, finished: map[string]int{}, active: map[string]*activity{}, touched: map[string]bool{}}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		d.tty = true
		d.width = func() int {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 20 {
				return cols
			}
			return 80
		}
	}
	d.started = d.now()
	return d
}

// start draws the display at once, and on a terminal redraws it five
// times a second until stop: elapsed times move while ffmpeg converts or
// a provider takes its time.
func (d *display) start() (stop func()) {
	d.refreshMoney()
	if !d.tty {
		d.mu.Lock()
		fmt.Fprintf(d.w, "recall-archive: %s, %d transcribed before, %s of audio to go; %s\n",
			output.Plural(d.total, "recording"), d.already, d.audioLeft.Round(time.Second), d.moneyText())
		d.mu.Unlock()
		return func() { d.close() }
	}
	d.draw()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if n++; n%5 == 0 {
					d.refreshMoney()
				}
				d.draw()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		d.close()
	}
}

// close leaves on the terminal the bar as the run ends, without the
// recordings worked on, above the run's report.
func (d *display) close() {
	d.refreshMoney()
	width := d.width()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty && !d.closed {
		d.active = map[string]*activity{}
		d.interrupted = false
		var b strings.Builder
		d.clearTo(&b)
		b.WriteString(strings.Join(d.render(d.now(), width), "\n") + "\n")
		io.WriteString(d.w, b.String())
	}
	d.closed = true
}

// refreshMoney reads the money from the database.
func (d *display) refreshMoney() {
	m, err := d.money()
	if err != nil {
		return // the last figures stay; the run reports the error
	}
	d.mu.Lock()
	d.lastMoney = m
	d.mu.Unlock()
}

// step is told of a recording's step; it is the run's Progress.
func (d *display) step(p recall.Progress) {
	// Each line says where the money stands; ffmpeg's progress within a
	// conversion writes no line, and reads nothing.
	if !d.tty && p.Stage != recall.StageFinished && (p.Stage != recall.StageConverting || p.Converted == 0) {
		d.refreshMoney()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	now := d.now()
	switch p.Stage {
	case recall.StageFinished:
		delete(d.active, p.SHA256)
		if p.Outcome != "waiting" && p.Outcome != "sending" {
			d.finished[p.Outcome]++
		}
		switch {
		case p.Outcome == "sending" && !d.tty:
			d.line(p, "in flight for another run, or for a killed run until its lease ends")
		case p.Outcome == recall.OutcomeOtherSettings && !d.tty:
			d.line(p, p.Detail)
		case d.tty || d.touched[p.SHA256] || p.Outcome == "done" || p.Outcome == "waiting":
		case p.Detail != "":
			// A recording that failed before any request, as a proxy
			// that ffmpeg cannot make.
			d.line(p, "failed before any payment: "+p.Detail)
		default:
			d.line(p, "left as an earlier run left it: "+strings.ReplaceAll(p.Outcome, "_", " "))
		}
		return
	case recall.StageAnswered:
		d.audioDone += p.Duration
	}
	d.touched[p.SHA256] = true
	a := d.active[p.SHA256]
	if a == nil {
		a = &activity{path: p.Path}
		d.active[p.SHA256] = a
	}
	if a.stage != p.Stage {
		a.since = now
	}
	progressOnly := p.Stage == recall.StageConverting && a.stage == p.Stage && p.Converted > 0 && p.Detail == ""
	a.stage, a.chunk, a.chunks, a.converted = p.Stage, p.Chunk, p.Chunks, -1
	if p.Stage == recall.StageConverting && p.Duration > 0 {
		a.converted = float64(p.Converted) / float64(p.Duration)
	}
	if !progressOnly {
		a.detail = ""
		if p.Stage == recall.StageConverting || p.Stage == recall.StageCutting {
			a.detail = p.Detail
		}
	}
	if d.tty || progressOnly {
		return // the next redraw shows it; without a terminal, a line per step, not per percent
	}
	what := string(p.Stage)
	if a.detail != "" {
		what += ": " + a.detail
	}
	switch p.Stage {
	case recall.StageSending:
		what = fmt.Sprintf("sending, $%s held", p.Cost.Decimal(6))
	case recall.StageAnswered:
		what = answered(p)
	}
	d.line(p, what)
}

// answered says how a chunk's request ended.
func answered(p recall.Progress) string {
	switch p.State {
	case journal.Applied:
		return fmt.Sprintf("transcribed, $%s spent", p.Cost.Decimal(6))
	case journal.Ambiguous:
		return "ambiguous: it may have been charged; see 'recall-archive ambiguous'"
	case journal.FailedSafe:
		return "failed before any payment: " + p.Detail
	case journal.NotApplied:
		return "refused by the provider, not charged: " + p.Detail
	case journal.Pending:
		return p.Detail // not sent: refused by the budget
	}
	return string(p.State)
}

// line writes a plain line about p; d.mu is held.
func (d *display) line(p recall.Progress, what string) {
	chunk := ""
	if p.Chunks > 1 && p.Chunk > 0 {
		chunk = fmt.Sprintf(" chunk %d/%d", p.Chunk, p.Chunks)
	}
	fmt.Fprintf(d.w, "recall-archive: [%d/%d] %q%s: %s; %s\n", d.done(), d.total, p.Path, chunk, what, d.moneyText())
}

// done counts the recordings the run is done with; d.mu is held.
func (d *display) done() int {
	n := 0
	for _, v := range d.finished {
		n += v
	}
	return n
}

// moneyText says where the budget stands; d.mu is held.
func (d *display) moneyText() string {
	m := d.lastMoney
	s := fmt.Sprintf("spent $%s, held $%s", m.Spent.Decimal(6), m.Held.Decimal(6))
	if m.Budget > 0 {
		s += fmt.Sprintf(" of a budget of $%s", m.Budget.Decimal(6))
	}
	if m.Play.Spent > 0 || m.Play.Held > 0 {
		s += fmt.Sprintf("; the sandbox's play money: spent $%s, held $%s", m.Play.Spent.Decimal(6), m.Play.Held.Decimal(6))
	}
	return s
}

// eta says how long the rest should take, at the rate of the answers so
// far; d.mu is held.
func (d *display) eta(now time.Time) string {
	if d.audioDone <= 0 {
		return "ETA after the first answer"
	}
	left := d.audioLeft - d.audioDone
	if left <= 0 {
		return "ETA any moment"
	}
	elapsed := now.Sub(d.started)
	return "ETA " + clockShort(time.Duration(float64(elapsed)*float64(left)/float64(d.audioDone)))
}

// render returns the terminal's lines: the bar, then each recording being
// worked on; d.mu is held.
func (d *display) render(now time.Time, width int) []string {
	done := d.done()
	const barWidth = 16
	filled := 0
	if d.total > 0 {
		filled = barWidth * done / d.total
	}
	head := fmt.Sprintf("[%s%s] %d/%d recordings", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), done, d.total)
	var outcomes []string
	for _, o := range []string{"ambiguous", "failed", "refused_by_budget", "paid_without_transcript", recall.OutcomeOtherSettings} {
		if n := d.finished[o]; n > 0 {
			outcomes = append(outcomes, fmt.Sprintf("%d %s", n, strings.ReplaceAll(o, "_", " ")))
		}
	}
	if len(outcomes) > 0 {
		head += " (" + strings.Join(outcomes, ", ") + ")"
	}
	head += fmt.Sprintf("  %s elapsed, %s", clockShort(now.Sub(d.started)), d.eta(now))
	lines := []string{head, "  money: " + d.moneyText()}
	if d.interrupted {
		lines = append(lines, "  interrupted: stopping once the requests in flight finish; Ctrl-C again ends the run at once")
	}
	shas := make([]string, 0, len(d.active))
	for sha := range d.active {
		shas = append(shas, sha)
	}
	// By when each stage began, then by path: recordings that began at
	// the same instant keep their places from one drawing to the next.
	slices.SortFunc(shas, func(a, b string) int {
		if c := d.active[a].since.Compare(d.active[b].since); c != 0 {
			return c
		}
		return strings.Compare(d.active[a].path, d.active[b].path)
	})
	for _, sha := range shas {
		a := d.active[sha]
		chunk := ""
		if a.chunks > 1 && a.chunk > 0 {
			chunk = fmt.Sprintf(" chunk %d/%d", a.chunk, a.chunks)
		}
		line := fmt.Sprintf("  %-21s %s%s  %s", a.stage, a.path, chunk, clockShort(now.Sub(a.since)))
		if a.stage == recall.StageConverting && a.converted >= 0 {
			line += fmt.Sprintf("  %d%%", int(a.converted*100))
		}
		if a.detail != "" {
			line += "\n    " + a.detail
		}
		lines = append(lines, line)
	}
	for i, l := range lines {
		lines[i] = cut(l, width-1)
	}
	return lines
}

// draw redraws the display over its last drawing.
func (d *display) draw() {
	width := d.width()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	lines := d.render(d.now(), width)
	var b strings.Builder
	d.clearTo(&b)
	b.WriteString(strings.Join(lines, "\n"))
	d.lines = len(lines)
	io.WriteString(d.w, b.String())
}

// clear erases the last drawing; d.mu is held.
func (d *display) clear() {
	var b strings.Builder
	d.clearTo(&b)
	io.WriteString(d.w, b.String())
}

// clearTo writes to b what erases the last drawing: back to its first
// line, and everything below cleared.
func (d *display) clearTo(b *strings.Builder) {
	if d.lines > 1 {
		fmt.Fprintf(b, "\033[%dA", d.lines-1)
	}
	if d.lines > 0 {
		b.WriteString("\r\033[J")
	}
	d.lines = 0
}

// interrupt says at once that the run stops, and what it waits for.
func (d *display) interrupt(timeout, lease time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.interrupted = true
	var inFlight []string
	for _, a := range d.active {
		if a.stage == recall.StageSending || a.stage == recall.StageWaiting {
			inFlight = append(inFlight, fmt.Sprintf("%q (%s)", a.path, a.stage))
		}
	}
	slices.Sort(inFlight)
	msg := "recall-archive: interrupted: no new recording or chunk starts, and ffmpeg stops."
	if len(inFlight) == 0 {
		msg += " No request is in flight.\n"
	} else {
		msg += fmt.Sprintf(" Waiting for the %s in flight to finish, each within --timeout %s: %s.\n", output.Plural(len(inFlight), "request"), timeout, strings.Join(inFlight, ", "))
		msg += fmt.Sprintf("recall-archive: Ctrl-C again ends the run at once: those requests then become ambiguous once --lease %s runs out, and are never sent again.\n", lease)
	}
	if d.tty {
		d.clear()
	}
	io.WriteString(d.w, msg)
}

// clockShort formats d as M:SS, or H:MM:SS past an hour.
func clockShort(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// cut shortens s to n characters, the end marked.
func cut(s string, n int) string {
	if n < 2 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
