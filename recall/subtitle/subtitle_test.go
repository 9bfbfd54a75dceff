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
	words, _ := timedWords(Segment{Start: 0, End: 4 * time.Second, Text: "one two three four five six seven eight nine ten eleven twelve"})
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
			seg := Segment{Start: at, End: at + d, Text: strings.Join(words, " ")}
			if rng.IntN(2) == 0 {
				// Timed words, with pauses, some said in no time, some
				// overlapping the one before.
				t := at
				for _, w := range words {
					t += time.Duration(rng.IntN(2500)-500) * time.Millisecond
					t = max(t, at)
					d := time.Duration(rng.IntN(3)) * time.Duration(rng.IntN(600)) * time.Millisecond
					seg.Words = append(seg.Words, Word{Start: t, End: t + d, Text: w})
					t += d
					seg.End = max(seg.End, t)
				}
			}
			segments = append(segments, seg)
			at = seg.End
		}
		cues := Cues(segments, r)
		check(t, segments, cues, r)
		if t.Failed() {
			t.Fatalf("rules %+v, segments %+v", r, segments)
		}
	}
}

// timedLike returns the words of text as a provider that times words
// without punctuation (OpenAI's whisper-1) gives them: each from at, said
// in each's length times per, with a gap between them.
func timedLike(text string, at, per, gap time.Duration) []Word {
	var words []Word
	for _, f := range strings.Fields(text) {
		w := strings.ToLower(strings.Trim(f, ".,;?!"))
		d := per * time.Duration(utf8.RuneCountInString(w))
		words = append(words, Word{Start: at, End: at + d, Text: w})
		at += d + gap
	}
	return words
}

// TestCuesAreTimedByWords: where the provider timed the words, each cue
// starts when its first word is said and ends when its last is (or later,
// only to be read), though the words have no punctuation nor capitals,
// and the cues show the segment's text.
func TestCuesAreTimedByWords(t *testing.T) {
	words := timedLike(talk, 2*time.Second, 40*time.Millisecond, 90*time.Millisecond)
	segments := []Segment{{Start: 2 * time.Second, End: words[len(words)-1].End, Text: talk, Words: words}}
	r := Rules{LineChars: 30, Lines: 1, MaxDuration: 7 * time.Second, CharsPerSecond: 1000}
	cues := Cues(segments, r)
	check(t, segments, cues, r)
	i := 0
	for _, c := range cues {
		n := len(strings.Fields(strings.Join(c.Lines, " ")))
		if len(c.Words) != n || c.Words[0].Start != c.Start {
			t.Errorf("cue %q has the words %+v", c.Lines, c.Words)
		}
		if first, last := words[i], words[i+n-1]; c.Start != first.Start || c.End != last.End {
			t.Errorf("cue %q is %s to %s; its words are said from %s to %s", c.Lines, c.Start, c.End, first.Start, last.End)
		}
		i += n
	}
	if plain := Cues([]Segment{{Start: segments[0].Start, End: segments[0].End, Text: talk}}, r); plain[1].Start == cues[1].Start {
		t.Errorf("the second cue starts at %s with or without the words", plain[1].Start)
	}
}

// TestAPauseEndsACue: a silence between two words ends the cue before
// it, though the next word would fit.
func TestAPauseEndsACue(t *testing.T) {
	words := []Word{{0, 300 * time.Millisecond, "Yes."}, {400 * time.Millisecond, 600 * time.Millisecond, "Well"}, {4 * time.Second, 4300 * time.Millisecond, "no."}}
	segments := []Segment{{Start: 0, End: 4300 * time.Millisecond, Text: "Yes. Well no.", Words: words}}
	cues := Cues(segments, Default)
	check(t, segments, cues, Default)
	if len(cues) != 2 || cues[1].Start != 4*time.Second || cues[0].End > 4*time.Second {
		t.Fatalf("cues %+v: want the pause to end the first", cues)
	}
}

// TestWordsThatDoNotSayTheTextAreNotUsed: words that are not the
// segment's text time nothing: the segment's time is shared by length.
func TestWordsThatDoNotSayTheTextAreNotUsed(t *testing.T) {
	plain := Segment{Start: time.Second, End: 9 * time.Second, Text: talk}
	for _, words := range [][]Word{
		timedLike("something else entirely", time.Second, 50*time.Millisecond, 0),
		timedLike(talk+" more", time.Second, 50*time.Millisecond, 0),
		timedLike(strings.TrimSuffix(talk, " machine."), time.Second, 50*time.Millisecond, 0),
	} {
		with := plain
		with.Words = words
		got, want := Cues([]Segment{with}, Default), Cues([]Segment{plain}, Default)
		if len(got) != len(want) || got[0].End != want[0].End || got[0].Words != nil {
			t.Errorf("cues %+v with words that are not the text; want %+v", got, want)
		}
	}
}

// TestWordsSaidInNoTimeShareTheNext: a word timed in no time (a name put
// before a turn, or a provider's) is shown with the word after it, or at
// the end the one before, so that no cue is of no length.
func TestWordsSaidInNoTimeShareTheNext(t *testing.T) {
	r := Rules{LineChars: 10, Lines: 1, MaxDuration: 7 * time.Second, CharsPerSecond: 1000}
	words := []Word{{time.Second, time.Second, "Speaker A:"}, {time.Second, 2 * time.Second, "Welcome"}, {2 * time.Second, 3 * time.Second, "back"}, {3 * time.Second, 3 * time.Second, "home"}}
	segments := []Segment{{Start: time.Second, End: 3 * time.Second, Text: "Speaker A: Welcome back home", Words: words}}
	cues := Cues(segments, r)
	check(t, segments, cues, r)
	if cues[0].Start != time.Second || cues[len(cues)-1].End != 3*time.Second {
		t.Errorf("cues %+v: want them from 1s to 3s", cues)
	}
}
