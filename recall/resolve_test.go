package recall_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall"
)

// TestParseTranscript: the provider's JSON keeps its timestamps, plain
// text is one segment, and a file that holds no text, or not text, is
// refused with what to give instead.
func TestParseTranscript(t *testing.T) {
	tr, err := recall.ParseTranscript([]byte(`{"text": "one two", "segments": [{"start": 0, "end": 1.5, "text": "one"}, {"start": 1.5, "end": 3, "text": " two"}]}`))
	if err != nil || tr.Text != "one two" || len(tr.Segments) != 2 || tr.Segments[1].Start != 1500*time.Millisecond || tr.Segments[1].Text != "two" {
		t.Errorf("the provider's JSON: %+v, %v", tr, err)
	}
	tr, err = recall.ParseTranscript([]byte("  what the provider said\n"))
	if err != nil || tr.Text != "what the provider said" || len(tr.Segments) != 1 || tr.Segments[0].Text != tr.Text {
		t.Errorf("plain text: %+v, %v", tr, err)
	}
	for in, want := range map[string]string{
		"":           "the transcript is empty",
		" \n\t":      "the transcript is empty",
		"\xff\xfeab": "not UTF-8 text",
	} {
		if _, err := recall.ParseTranscript([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", in, err, want)
		}
	}
}
