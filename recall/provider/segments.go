package provider

import (
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
)

// word is a timed word of a transcript.
type word struct {
	text       string
	start, end time.Duration
	speaker    string
}

// sentences groups words into segments that end at a sentence, after
// about 10 s, or where another speaker starts.
func sentences(words []word) []recording.Segment {
	var segs []recording.Segment
	var texts []string
	var start, last time.Duration
	var speaker string
	flush := func() {
		if len(texts) > 0 {
			segs = append(segs, recording.Segment{Start: start, End: last, Text: strings.Join(texts, " "), Speaker: speaker})
		}
		texts = nil
	}
	for _, w := range words {
		if len(texts) > 0 && w.speaker != speaker {
			flush()
		}
		if len(texts) == 0 {
			start, speaker = w.start, w.speaker
		}
		texts = append(texts, w.text)
		last = w.end
		if strings.HasSuffix(w.text, ".") || strings.HasSuffix(w.text, "?") || strings.HasSuffix(w.text, "!") || w.end-start >= 10*time.Second {
			flush()
		}
	}
	flush()
	return segs
}
