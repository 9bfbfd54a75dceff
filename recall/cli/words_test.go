package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// exportedWord is a word of an exported JSON transcript.
type exportedWord struct {
	Start float64 `json:"start_seconds"`
	End   float64 `json:"end_seconds"`
	Text  string  `json:"text"`
}

// TestWordTimesEndToEnd runs a batch through the sandbox, which times
// each word as whisper-1 does when asked (without punctuation), and
// exports it: the JSON keeps each segment's words, and every VTT and SRT
// cue, cut under the subtitle flags, starts at its first word's start
// and ends at its last word's end; --word-times tags each VTT cue's words
// after its first with the time they are said.
func TestWordTimesEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "talk.mp3"))
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	out := t.TempDir()
	for _, args := range [][]string{{"add", "b", dir}, {"run", "b"},
		{"export", "b", "--out", out, "--format", "json,vtt,srt", "--include-sandbox", "--line-chars", "10", "--lines", "1", "--reading-speed", "1000"}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "talk.json"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Check(t, "recall-archive/transcript.json", data)
	var doc struct {
		Segments []struct {
			Text  string         `json:"text"`
			Words []exportedWord `json:"words"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Segments) != 1 {
		t.Fatalf("talk.json: %v\n%s", err, data)
	}
	words := doc.Segments[0].Words
	if len(words) != len(strings.Fields(doc.Segments[0].Text)) || words[0].Text != "sandbox" {
		t.Fatalf("the segment %q has the words %+v", doc.Segments[0].Text, words)
	}
	for _, format := range []struct{ ext, sep string }{{"vtt", "."}, {"srt", ","}} {
		text, _ := os.ReadFile(filepath.Join(out, "talk."+format.ext))
		timing := regexp.MustCompile(`(?m)^(\d\d:\d\d:\d\d` + regexp.QuoteMeta(format.sep) + `\d\d\d) --> (\S+)\n(.*)$`)
		cues := timing.FindAllStringSubmatch(string(text), -1)
		if len(cues) < 3 {
			t.Fatalf("talk.%s has %d cues, want one per group of words under 10 characters a line:\n%s", format.ext, len(cues), text)
		}
		i := 0
		for _, c := range cues {
			n := len(strings.Fields(c[3]))
			if i+n > len(words) {
				t.Fatalf("talk.%s has more words than the transcript:\n%s", format.ext, text)
			}
			first, last := stamp(words[i].Start, format.sep), stamp(words[i+n-1].End, format.sep)
			if c[1] != first || c[2] != last {
				t.Errorf("talk.%s: cue %q is %s --> %s; its words are said from %s to %s", format.ext, c[3], c[1], c[2], first, last)
			}
			i += n
		}
		if i != len(words) {
			t.Errorf("talk.%s shows %d of the %d words:\n%s", format.ext, i, len(words), text)
		}
	}

	// With --word-times, each word of a VTT cue after its first is
	// preceded by the time it is said.
	timed := t.TempDir()
	if r := run(t, env, "export", "b", "--out", timed, "--format", "vtt", "--include-sandbox", "--line-chars", "10", "--lines", "1", "--reading-speed", "1000", "--word-times"); r.code != cli.ExitOK {
		t.Fatalf("export --word-times: %d %s", r.code, r.stderr)
	}
	vtt, _ := os.ReadFile(filepath.Join(timed, "talk.vtt"))
	var shown []string
	tagged := 0
	for _, block := range strings.Split(strings.TrimSpace(string(vtt)), "\n\n")[1:] {
		for j, f := range strings.Fields(strings.SplitN(block, "\n", 2)[1]) {
			if tag := regexp.MustCompile(`^<(\d\d:\d\d:\d\d\.\d\d\d)>(.*)$`).FindStringSubmatch(f); tag != nil {
				if j == 0 || tag[1] != stamp(words[len(shown)].Start, ".") {
					t.Errorf("the word %q of a cue is tagged %s; it is said at %s", tag[2], tag[1], stamp(words[len(shown)].Start, "."))
				}
				f = tag[2]
				tagged++
			}
			shown = append(shown, f)
		}
	}
	if len(shown) != len(words) || tagged != len(words)-strings.Count(string(vtt), " --> ") {
		t.Errorf("--word-times tagged %d of %d words:\n%s", tagged, len(shown), vtt)
	}
}

// stamp is s seconds as a subtitle's time, with sep before the
// milliseconds.
func stamp(s float64, sep string) string {
	ms := int64(s*1000 + 0.5)
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

// TestWordTimesInTheDocs exports the interview of TestSpeakersEndToEnd,
// timed by AssemblyAI's words, under shorter lines: docs/recall-archive.md
// shows its VTT, cues timed per group of words, and its JSON's first
// segment with its words, a word a line.
func TestWordTimesInTheDocs(t *testing.T) {
	t.Parallel()
	db, env, _, _ := interviewed(t)
	out := t.TempDir()
	if r := run(t, env, "--db", db, "export", "talks", "--out", out, "--format", "vtt,srt,json", "--line-chars", "16", "--lines", "1"); r.code != cli.ExitOK {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	vtt, _ := os.ReadFile(filepath.Join(out, "talk.vtt"))
	doccheck.Transcript(t, "recall-vtt-words", string(vtt))
	// SRT names the speaker where a turn starts, and its words still time
	// its cues: "be here." is said from 2.2 s.
	if srt, _ := os.ReadFile(filepath.Join(out, "talk.srt")); !strings.Contains(string(srt), "Speaker B:") || !strings.Contains(string(srt), "00:00:02,200 --> 00:00:02,700\nbe here.\n") {
		t.Errorf("talk.srt:\n%s", srt)
	}
	data, _ := os.ReadFile(filepath.Join(out, "talk.json"))
	schematest.Check(t, "recall-archive/transcript.json", data)
	var doc struct {
		Segments []json.RawMessage `json:"segments"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Segments) == 0 {
		t.Fatalf("talk.json: %v\n%s", err, data)
	}
	var compact, first bytes.Buffer
	json.Compact(&compact, doc.Segments[0])
	json.Indent(&first, compact.Bytes(), "", "  ")
	// A word a line, as the document shows them.
	word := regexp.MustCompile(`\{\n\s+("start_seconds"[^{}]*)\n\s+\}`)
	shown := word.ReplaceAllStringFunc(first.String(), func(w string) string {
		return regexp.MustCompile(`\n\s+`).ReplaceAllString(w, " ")
	})
	doccheck.Transcript(t, "recall-json-words", shown+"\n")
}
