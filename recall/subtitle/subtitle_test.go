package subtitle

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const talk = "The archive keeps every recording once, whatever its name. A paid call that may have gone through is never sent again, " +
	"and a person settles what a machine cannot know. Failures before the boundary are retried freely; after it, never by a machine."

// check asserts what every cut must hold: every word once and in order,
// lines and cues within the rules, cues in order without overlap, each
// inside its segment's time, or after it only to be read.
func check(t *testing.T, segments []Segment, cues []Cue, r Rules) {
	t.Helper()
	var want, got []string
	for _, s := range segments {
		want = append(want, strings.Fields(s.Text)...)
	}
	for i, c := range cues {
		if len(c.Lines) == 0 || len(c.Lines) > r.Lines {
			t.Errorf("cue %d has %d lines: %q", i, len(c.Lines), c.Lines)
		}
		for _, l := range c.Lines {
			if n := utf8.RuneCountInString(l); n > r.LineChars && strings.Contains(l, " ") {
				t.Errorf("cue %d: a line of %d characters, more than %d: %q", i, n, r.LineChars, l)
			}
			got = append(got, strings.Fields(l)...)
		}
		if c.End <= c.Start || c.End-c.Start > r.MaxDuration {
			t.Errorf("cue %d lasts %s (%s to %s)", i, c.End-c.Start, c.Start, c.End)
		}
		if i > 0 && c.Start < cues[i-1].End {
			t.Errorf("cue %d starts at %s, before cue %d ends at %s", i, c.Start, i-1, cues[i-1].End)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the cues' words differ from the transcript's:\n%s\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

func TestCuesKeepTheRules(t *testing.T) {
	segments := []Segment{{Start: 2 * time.Second, End: 17 * time.Second, Text: talk}}
	cues := Cues(segments, Default)
	check(t, segments, cues, Default)
	if len(cues) < 4 {
		t.Fatalf("%d cues for %d characters: %q", len(cues), len(talk), cues)
	}
	if cues[0].Start != 2*time.Second || cues[len(cues)-1].End < 17*time.Second {
		t.Errorf("the cues span %s to %s, not the segment's 2s to 17s", cues[0].Start, cues[len(cues)-1].End)
	}
	// A sentence's end within the cue's second half ends the cue.
	if last := cues[0].Lines[len(cues[0].Lines)-1]; !strings.HasSuffix(last, "name.") {
		t.Errorf("the first cue does not end with its sentence: %q", cues[0].Lines)
	}
}

func TestTwoLinesAreBalanced(t *testing.T) {
	words := timedWords(Segment{Start: 0, End: 4 * time.Second, Text: "one two three four five six seven eight nine ten eleven twelve"})
	lines := wrap(words, 42)
	if len(lines) != 2 || diff(lines[0], lines[1]) > 6 {
		t.Errorf("lines %q: want two of similar length", lines)
	}
}

func TestAWordLongerThanALineIsWhole(t *testing.T) {
	long := strings.Repeat("x", 60)
	segments := []Segment{{Start: 0, End: 3 * time.Second, Text: "a " + long + " b"}}
	cues := Cues(segments, Default)
	check(t, segments, cues, Default)
	found := false
	for _, c := range cues {
		for _, l := range c.Lines {
			found = found || l == long
		}
	}
	if !found {
		t.Errorf("the long word is not on a line of its own: %q", cues)
	}
}

// TestFastSpeechStaysLongerOnScreen: a cue whose text needs more time to
// read than it was said in stays on until the next cue, never over it.
func TestFastSpeechStaysLongerOnScreen(t *testing.T) {
	segments := []Segment{
		{Start: 0, End: 500 * time.Millisecond, Text: "Nobody knows whether they were charged."},
		{Start: 1500 * time.Millisecond, End: 1800 * time.Millisecond, Text: "So both are ambiguous."},
		{Start: 9 * time.Second, End: 10 * time.Second, Text: "Later."},
	}
	cues := Cues(segments, Default)
	check(t, segments, cues, Default)
	if len(cues) != 3 {
		t.Fatalf("%d cues: %q", len(cues), cues)
	}
	if cues[0].End != 1500*time.Millisecond {
		t.Errorf("the first cue ends at %s; want it kept up to the next cue, at 1.5s", cues[0].End)
	}
	chars := float64(len("So both are ambiguous."))
	need := time.Duration(chars / 17 * float64(time.Second))
	if got := cues[1].End - cues[1].Start; got < need-time.Millisecond || got > need+time.Millisecond {
		t.Errorf("the second cue lasts %s; its 22 characters need %s at 17 a second", got, need)
	}
}

func TestRulesAreChecked(t *testing.T) {
	if err := Default.Check(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Rules{
		{LineChars: 5, Lines: 2, MaxDuration: 7 * time.Second, CharsPerSecond: 17},
		{LineChars: 42, Lines: 0, MaxDuration: 7 * time.Second, CharsPerSecond: 17},
		{LineChars: 42, Lines: 2, MaxDuration: 100 * time.Millisecond, CharsPerSecond: 17},
		{LineChars: 42, Lines: 2, MaxDuration: 7 * time.Second, CharsPerSecond: 0},
	} {
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), "give") {
			t.Errorf("%+v: %v; want an error saying what to give", r, err)
		}
	}
}

// TestRandomTranscripts: whatever the words and timings, every cut keeps
// the rules.
func TestRandomTranscripts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocabulary := strings.Fields(talk + " extraordinarily a I it's über-long-compound-word")
	for range 300 {
		r := Rules{LineChars: 20 + rng.IntN(30), Lines: 1 + rng.IntN(3), MaxDuration: time.Duration(2+rng.IntN(8)) * time.Second, CharsPerSecond: 10 + 10*rng.Float64()}
		var segments []Segment
		at := time.Duration(0)
		for range 1 + rng.IntN(5) {
			var words []string
			for range 1 + rng.IntN(40) {
				words = append(words, vocabulary[rng.IntN(len(vocabulary))])
			}
			at += time.Duration(rng.IntN(2000)) * time.Millisecond
			d := time.Duration(300+rng.IntN(20000)) * time.Millisecond
			segments = append(segments, Segment{Start: at, End: at + d, Text: strings.Join(words, " ")})
			at += d
		}
		cues := Cues(segments, r)
		check(t, segments, cues, r)
		if t.Failed() {
			t.Fatalf("rules %+v, segments %+v", r, segments)
		}
	}
}
