package recall_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/subtitle"
)

// TestExportedSubtitlesKeepTheRules: a transcript timed only by its chunk
// (a person's plain text, settling an ambiguous request) is exported as
// cues a viewer can read, under the default rules and under the rules an
// archive is opened with.
func TestExportedSubtitlesKeepTheRules(t *testing.T) {
	w := newWorld(t, "1:charge-drop", map[string]time.Duration{"a.mp3": 20 * time.Second})
	w.run(recall.RunOptions{})
	amb, err := w.a.Ambiguous(context.Background(), "b")
	if err != nil || len(amb) != 1 {
		t.Fatalf("ambiguous: %+v, %v", amb, err)
	}
	text := strings.Repeat("The archive keeps every recording once, whatever its name. A paid call that may have gone through is never sent again. ", 3)
	tr, err := recall.ParseTranscript([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.a.Resolve(context.Background(), amb[0].Key, recall.Decision{Applied: true, Transcript: tr, By: "ana", Note: "charged"}); err != nil {
		t.Fatal(err)
	}
	for _, rules := range []subtitle.Rules{subtitle.Default, {LineChars: 24, Lines: 1, MaxDuration: 3 * time.Second, CharsPerSecond: 20}} {
		a := w.a
		if rules != subtitle.Default {
			if a, err = recall.Open(context.Background(), w.dbPath, recall.Options{Subtitles: rules}); err != nil {
				t.Fatal(err)
			}
			defer a.Close()
		}
		out := t.TempDir()
		if _, err := a.Export(context.Background(), "b", out, []string{"srt"}, true); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(out, "*.srt"))
		if len(files) != 1 {
			t.Fatalf("exported %v", files)
		}
		srt, _ := os.ReadFile(files[0])
		cues := strings.Split(strings.TrimSpace(string(srt)), "\n\n")
		if len(cues) < 4 {
			t.Fatalf("%d cues for %d characters in 20 s:\n%s", len(cues), len(text), srt)
		}
		timing := regexp.MustCompile(`^(\d\d):(\d\d):(\d\d),(\d\d\d) --> (\d\d):(\d\d):(\d\d),(\d\d\d)$`)
		var words []string
		for _, c := range cues {
			lines := strings.Split(c, "\n")
			m := timing.FindStringSubmatch(lines[1])
			if m == nil {
				t.Fatalf("cue %q has no timing line", c)
			}
			start, end := srtTime(m[1:5]), srtTime(m[5:9])
			if end <= start || end-start > rules.MaxDuration {
				t.Errorf("rules %+v: cue %q lasts %s", rules, lines[0], end-start)
			}
			if len(lines)-2 > rules.Lines {
				t.Errorf("rules %+v: cue %q has %d lines", rules, lines[0], len(lines)-2)
			}
			for _, l := range lines[2:] {
				if utf8.RuneCountInString(l) > rules.LineChars {
					t.Errorf("rules %+v: line %q is longer than %d", rules, l, rules.LineChars)
				}
				words = append(words, strings.Fields(l)...)
			}
		}
		if strings.Join(words, " ") != strings.Join(strings.Fields(text), " ") {
			t.Errorf("rules %+v: the cues' words are not the transcript's:\n%s", rules, srt)
		}
	}
	if _, err := recall.Open(context.Background(), w.dbPath, recall.Options{Subtitles: subtitle.Rules{LineChars: 3, Lines: 2, MaxDuration: time.Second, CharsPerSecond: 1}}); err == nil {
		t.Error("an archive opened with lines of 3 characters")
	}
}

func srtTime(hmsm []string) time.Duration {
	var n [4]int
	for i, s := range hmsm {
		for _, r := range s {
			n[i] = n[i]*10 + int(r-'0')
		}
	}
	return time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second + time.Duration(n[3])*time.Millisecond
}
