package provider

import (
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
)

// sentences groups words into segments that end at a sentence, after
// about 10 s, or where another speaker starts; each segment keeps its
// words.
func sentences(words []recording.Word) []recording.Segment {
	var segs []recording.Segment
	var group []recording.Word
	flush := func() {
		if len(group) == 0 {
			return
		}
		texts := make([]string, len(group))
		for i, w := range group {
			texts[i] = w.Text
		}
		segs = append(segs, recording.Segment{Start: group[0].Start, End: group[len(group)-1].End,
			Text: strings.Join(texts, " "), Speaker: group[0].Speaker, Words: group})
		group = nil
	}
	for _, w := range words {
		if len(group) > 0 && w.Speaker != group[0].Speaker {
			flush()
		}
		group = append(group, w)
		if strings.HasSuffix(w.Text, ".") || strings.HasSuffix(w.Text, "?") || strings.HasSuffix(w.Text, "!") || w.End-group[0].Start >= 10*time.Second {
			flush()
		}
	}
	flush()
	return segs
}

// withWords gives each segment the words said in it, in order: a word
// belongs to the last segment that starts before its middle (or the first
// segment), as providers that time words and segments apart (OpenAI's
// verbose_json) let a word's time stray a little past its segment's.
func withWords(segs []recording.Segment, words []recording.Word) {
	i := 0
	for _, w := range words {
		mid := w.Start + (w.End-w.Start)/2
		for i+1 < len(segs) && segs[i+1].Start <= mid {
			i++
		}
		if i < len(segs) {
			segs[i].Words = append(segs[i].Words, w)
		}
	}
}
