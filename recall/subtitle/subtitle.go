// Package subtitle cuts a timed transcript into subtitle cues that a
// viewer can read: lines of a bounded length, a bounded number of lines
// and time on screen, and text shown long enough for its reading speed,
// without ever splitting a word.
//
// The rules' defaults are those broadcasters publish for subtitles
// (42 characters a line, 2 lines, 7 seconds, about 17 characters a
// second for adult viewers). A segment of the transcript is cut into as
// many cues as the rules need. Where the provider timed its words, each
// cue starts when its first word is said and ends when its last is, and a
// pause between words ends a cue; where the provider timed only the
// segment, each word is given a share of its time by its length.
package subtitle

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Rules bound each cue, and say how cues are written.
type Rules struct {
	// LineChars is the most characters a line holds (default 42).
	LineChars int
	// Lines is the most lines a cue holds (default 2).
	Lines int
	// MaxDuration is the longest a cue stays on screen (default 7 s).
	MaxDuration time.Duration
	// CharsPerSecond is the fastest reading speed asked of a viewer
	// (default 17): a cue whose text needs longer stays on screen longer,
	// up to the next cue's start.
	CharsPerSecond float64
	// WordTimes writes in each VTT cue the time each word after its
	// first is said (<00:00:01.500>), where the provider timed words, for
	// players that show words as they are said (default off).
	WordTimes bool
}

// Default are the rules when none are given.
var Default = Rules{LineChars: 42, Lines: 2, MaxDuration: 7 * time.Second, CharsPerSecond: 17}

// Check says what is wrong with r, naming the setting.
func (r Rules) Check() error {
	switch {
	case r.LineChars < 10:
		return fmt.Errorf("a subtitle line of %d characters is too short to hold words: give at least 10 (broadcasters use 37 to 42)", r.LineChars)
	case r.Lines < 1:
		return fmt.Errorf("a cue of %d lines shows nothing: give at least 1 (broadcasters use 2)", r.Lines)
	case r.MaxDuration < time.Second:
		return fmt.Errorf("a cue of at most %s cannot be read: give at least 1s (broadcasters use 6s to 7s)", r.MaxDuration)
	case r.CharsPerSecond <= 0:
		return fmt.Errorf("a reading speed of %g characters a second is not one: give more than 0 (broadcasters use 15 to 20)", r.CharsPerSecond)
	}
	return nil
}

// Segment is a piece of transcript timed from the start of the recording.
type Segment struct {
	Start, End time.Duration
	Text       string
	// Speaker, if known, labels who speaks.
	Speaker string
	// Words, if the provider timed them, are the segment's words in
	// order. Their text may differ from Text in punctuation, case and
	// spacing (OpenAI's words have no punctuation); the cues show Text,
	// timed by the words that say it.
	Words []Word
}

// Word is a word as the provider timed it.
type Word struct {
	Start, End time.Duration
	Text       string
}

// pause is the silence between two timed words that ends a cue, so that
// no text stays on screen through it before it is said.
const pause = 1500 * time.Millisecond

// Cue is what is on screen from Start to End; Speaker is its segment's.
type Cue struct {
	Start, End time.Duration
	Lines      []string
	Speaker    string
	// Words are the words the lines show, in order, each with the time
	// it is said, where the provider timed words; none where the times
	// are shares of a segment's, which no one should take for when a
	// word was said.
	Words []Word
}

// word is a word with the time it is said.
type word struct {
	text       string
	start, end time.Duration
}

// Cues cuts segments into cues under r. Cues never span two segments, nor
// overlap; each word is whole on one line, and a word longer than a line
// has a line of its own.
func Cues(segments []Segment, r Rules) []Cue {
	var cues []Cue
	for _, s := range segments {
		words, timed := timedWords(s)
		for len(words) > 0 {
			n := fit(words, r)
			// A word said for longer than a cue may last (a pause the
			// provider left inside a segment) leaves the screen empty
			// for the rest of it.
			end := min(words[n-1].end, words[0].start+r.MaxDuration)
			cue := Cue{Start: words[0].start, End: end, Lines: wrap(words[:n], r.LineChars), Speaker: s.Speaker}
			if timed {
				for _, w := range words[:n] {
					cue.Words = append(cue.Words, Word{Start: w.start, End: w.end, Text: w.text})
				}
			}
			cues = append(cues, cue)
			words = words[n:]
		}
	}
	readable(cues, r)
	return cues
}

// timedWords times each word of s's text: by the provider's words where
// they say the same text (timed), else each a share of the segment's time
// by its length, spaces counted: what a speaker takes to say it, near
// enough.
func timedWords(s Segment) (words []word, timed bool) {
	fields := strings.Fields(s.Text)
	if len(fields) == 0 {
		return nil, false
	}
	if words, ok := aligned(fields, s.Words); ok {
		return words, true
	}
	total := 0
	for _, f := range fields {
		total += utf8.RuneCountInString(f) + 1
	}
	span := s.End - s.Start
	if span < 0 {
		span = 0
	}
	words = make([]word, len(fields))
	at := 0
	for i, f := range fields {
		start := s.Start + span*time.Duration(at)/time.Duration(total)
		at += utf8.RuneCountInString(f) + 1
		end := s.Start + span*time.Duration(at)/time.Duration(total)
		if i == len(fields)-1 {
			end = s.End
		}
		words[i] = word{f, start, end}
	}
	return words, false
}

// aligned times fields, the words of a segment's text, by the provider's
// timed words: the letters and digits of both, in order and without case,
// must be the same, and each field takes the time from the start of the
// timed word its first letter is in to the end of the one its last is in
// (a field without letters, the time at the end of the field before it).
// Times never go back, so cues cut from them cannot overlap.
func aligned(fields []string, timed []Word) ([]word, bool) {
	if len(timed) == 0 {
		return nil, false
	}
	var letters []rune
	var owner []int
	for i, w := range timed {
		for _, r := range normal(w.Text) {
			letters = append(letters, r)
			owner = append(owner, i)
		}
	}
	words := make([]word, len(fields))
	at, last := 0, timed[0].Start
	for i, f := range fields {
		rs := normal(f)
		if at+len(rs) > len(letters) || string(letters[at:at+len(rs)]) != string(rs) {
			return nil, false
		}
		start, end := last, last
		if len(rs) > 0 {
			start, end = timed[owner[at]].Start, timed[owner[at+len(rs)-1]].End
			at += len(rs)
		}
		start = max(start, last)
		end = max(end, start)
		words[i] = word{f, start, end}
		last = end
	}
	return words, at == len(letters) && shared(words)
}

// shared gives the words said in no time (a word the provider timed so,
// a speaker's name put before a turn) a share of the time of the word
// that follows them, or else of the one before, so that no cue is of no
// length; it reports false when no word has a time of its own.
func shared(words []word) bool {
	for i := 0; i < len(words); {
		if words[i].end > words[i].start {
			i++
			continue
		}
		j := i
		for j < len(words) && words[j].end <= words[j].start {
			j++
		}
		// words[i:j] share the time of words[j], or, at the end, of
		// words[i-1].
		first, last, from := i, j, time.Duration(0)
		if j == len(words) {
			if i == 0 {
				return false
			}
			first, last = i-1, j-1
			from = words[first].start
		} else {
			from = words[j].start
		}
		to, n := words[last].end, time.Duration(last-first+1)
		for k := first; k <= last; k++ {
			words[k].start = from + (to-from)*time.Duration(k-first)/n
			words[k].end = from + (to-from)*time.Duration(k-first+1)/n
		}
		i = last + 1
	}
	return true
}

// normal is s's letters and digits, in lower case: what a provider's
// word and the text it is in agree on.
func normal(s string) []rune {
	var rs []rune
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			rs = append(rs, unicode.ToLower(r))
		}
	}
	return rs
}

// fit returns how many of words, at least one, the next cue takes: as
// many as fit its lines and its time, and are said without a pause,
// ending at the last sentence's end within them when there is one past
// the cue's first half.
func fit(words []word, r Rules) int {
	n := 1
	for n < len(words) && len(wrap(words[:n+1], r.LineChars)) <= r.Lines && words[n].end-words[0].start <= r.MaxDuration &&
		words[n].start-words[n-1].end < pause {
		n++
	}
	if n == len(words) {
		return n
	}
	for i := n - 1; i >= n/2 && i > 0; i-- {
		if endsSentence(words[i].text) {
			return i + 1
		}
	}
	return n
}

func endsSentence(w string) bool {
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!") ||
		strings.HasSuffix(w, "…") || strings.HasSuffix(w, ".\"") || strings.HasSuffix(w, "?\"")
}

// wrap lays words out in lines of at most width characters, balanced: a
// cue of two lines has them of similar length, as viewers read best.
func wrap(words []word, width int) []string {
	lines := greedy(words, width)
	if len(lines) != 2 {
		return lines
	}
	// Move the break back while the two lines grow closer in length and
	// the second still fits.
	best := lines
	for k := len(words) - 1; k > 0; k-- {
		first, second := join(words[:k]), join(words[k:])
		if utf8.RuneCountInString(first) > width || utf8.RuneCountInString(second) > width {
			continue
		}
		if diff(first, second) < diff(best[0], best[1]) {
			best = []string{first, second}
		}
	}
	return best
}

func greedy(words []word, width int) []string {
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w.text
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w.text) <= width:
			line += " " + w.text
		default:
			lines = append(lines, line)
			line = w.text
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func join(words []word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func diff(a, b string) int {
	d := utf8.RuneCountInString(a) - utf8.RuneCountInString(b)
	if d < 0 {
		return -d
	}
	return d
}

// readable keeps each cue on screen long enough for its text at the
// rules' reading speed, as far as the next cue's start and the longest
// a cue may stay allow.
func readable(cues []Cue, r Rules) {
	for i := range cues {
		c := &cues[i]
		chars := 0
		for _, l := range c.Lines {
			chars += utf8.RuneCountInString(l)
		}
		need := time.Duration(float64(chars) / r.CharsPerSecond * float64(time.Second))
		need = min(need, r.MaxDuration)
		if c.End-c.Start >= need {
			continue
		}
		end := c.Start + need
		if i+1 < len(cues) && end > cues[i+1].Start {
			end = max(c.End, cues[i+1].Start)
		}
		c.End = end
	}
}
