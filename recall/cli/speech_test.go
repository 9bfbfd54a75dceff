package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// vocabulary is what the speech endpoint recognises. Debian's
// pocketsphinx with its general English model hears espeak-ng's synthetic
// voice poorly; within a vocabulary of a few dozen words it hears it
// well. The words not spoken are there to be confused with those spoken.
var vocabulary = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"harbour", "lights", "morning", "evening", "water", "river", "archive", "recording", "budget", "tuesday", "friday"}

// speechEndpoint is an OpenAI-compatible POST /v1/audio/transcriptions
// on loopback that really transcribes: ffmpeg decodes the upload, and
// pocketsphinx_continuous recognises it, each word with its time. It
// answers verbose_json with a segment per utterance, as OpenAI does.
func speechEndpoint(t *testing.T, key string) (url string, requests *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	grammar := filepath.Join(dir, "words.gram")
	os.WriteFile(grammar, []byte("#JSGF V1.0;\ngrammar words;\npublic <utterance> = <word>+;\n<word> = "+strings.Join(vocabulary, " | ")+";\n"), 0o644)
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error": {"message": "bad key"}}`, http.StatusUnauthorized)
			return
		}
		n := requests.Add(1)
		file, _, err := r.FormFile("file")
		if err != nil || r.FormValue("response_format") != "verbose_json" {
			http.Error(w, fmt.Sprintf("want a file and verbose_json: %v", err), http.StatusBadRequest)
			return
		}
		upload := filepath.Join(dir, fmt.Sprintf("upload-%d", n))
		wav := upload + ".wav"
		data, _ := io.ReadAll(file)
		os.WriteFile(upload, data, 0o644)
		if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", upload, "-ar", "16000", "-ac", "1", "-acodec", "pcm_s16le", wav).CombinedOutput(); err != nil {
			http.Error(w, fmt.Sprintf("ffmpeg: %v: %s", err, out), http.StatusBadRequest)
			return
		}
		out, err := exec.Command("pocketsphinx_continuous", "-infile", wav, "-jsgf", grammar, "-time", "yes", "-logfn", os.DevNull).Output()
		if err != nil {
			http.Error(w, fmt.Sprintf("pocketsphinx: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", n))
		json.NewEncoder(w).Encode(verboseJSON(out))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

type segment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// verboseJSON makes OpenAI's answer of pocketsphinx's output: with -time
// yes, a line per word, "word start end probability", utterances opened
// by <s> and closed by </s>; fillers are in brackets or <sil>, (NULL)
// joins words, and word(2) is a second pronunciation.
func verboseJSON(out []byte) map[string]any {
	var segs []segment
	var cur *segment
	var texts []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue // the hypothesis line
		}
		word := f[0]
		start, err1 := strconv.ParseFloat(f[1], 64)
		end, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		switch {
		case word == "</s>" && cur != nil:
			segs, cur = append(segs, *cur), nil
		case strings.HasPrefix(word, "<") || strings.HasPrefix(word, "[") || word == "(NULL)":
		default:
			word, _, _ = strings.Cut(word, "(")
			if cur == nil {
				cur = &segment{Start: start}
			}
			cur.End = end
			cur.Text = strings.TrimSpace(cur.Text + " " + word)
		}
	}
	if cur != nil {
		segs = append(segs, *cur)
	}
	for _, s := range segs {
		texts = append(texts, s.Text)
	}
	if segs == nil {
		segs = []segment{}
	}
	return map[string]any{"task": "transcribe", "language": "english", "text": strings.Join(texts, " "), "segments": segs}
}

// speak records text spoken by espeak-ng after silence seconds of
// silence, as MP3.
func speak(t *testing.T, path, text string, silence int) {
	t.Helper()
	wav := path + ".wav"
	if out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "140", "-w", wav, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v\n%s", err, out)
	}
	defer os.Remove(wav)
	testkit.FFmpegFile(t, path, "-i", wav, "-af", fmt.Sprintf("adelay=%d:all=1", silence*1000), "-ac", "1")
}

// TestRealSpeechThroughTheWholePipeline speaks known sentences with
// espeak-ng, transcribes them with 'run --provider openai' through an
// OpenAI-compatible endpoint that recognises speech with pocketsphinx,
// and finds their words with search, at the time they are spoken: after
// 5 s of silence in one recording, at once in the other.
func TestRealSpeechThroughTheWholePipeline(t *testing.T) {
	t.Parallel()
	testkit.Require(t, testkit.FFmpeg)
	testkit.Require(t, testkit.Speech, "espeak-ng")
	testkit.Require(t, testkit.Speech, "pocketsphinx_continuous")
	testkit.RequireFile(t, testkit.Speech, "/usr/share/pocketsphinx/model/en-us")
	const key = "sk-test-speech"
	url, requests := speechEndpoint(t, key)
	rec := t.TempDir()
	speak(t, filepath.Join(rec, "harbour.mp3"), "the harbour lights", 5)
	speak(t, filepath.Join(rec, "morning.mp3"), "morning recording", 0)
	out := t.TempDir()
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir(), "OPENAI_API_KEY": key}
	if r := run(t, env, "add", "talks", rec); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if r := run(t, env, "run", "talks", "--provider", "openai", "--provider-url", url, "--out", out); r.code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests for two recordings", n)
	}
	for name, words := range map[string][]string{"harbour": {"harbour", "lights"}, "morning": {"morning", "recording"}} {
		files, _ := filepath.Glob(filepath.Join(out, name+".*.txt"))
		if len(files) != 1 {
			t.Fatalf("the transcripts of %s: %v", name, files)
		}
		text, _ := os.ReadFile(files[0])
		for _, w := range words {
			if !strings.Contains(string(text), w) {
				t.Errorf("%s.mp3 was heard as %q, without %q", name, text, w)
			}
		}
	}
	for _, c := range []struct {
		word, file string
		from, to   float64
	}{{"harbour", "harbour.mp3", 5, 7}, {"lights", "harbour.mp3", 5, 7.5}, {"recording", "morning.mp3", 0, 2}} {
		r := run(t, env, "--json", "search", c.word)
		var res struct {
			Hits []struct {
				Paths []string `json:"paths"`
				Start float64  `json:"start_seconds"`
				End   float64  `json:"end_seconds"`
			} `json:"hits"`
		}
		err := json.Unmarshal([]byte(r.stdout), &res)
		hits := res.Hits
		if err != nil || len(hits) != 1 {
			t.Errorf("search %s: %v\n%s", c.word, err, r.stdout)
			continue
		}
		h := hits[0]
		if len(h.Paths) != 1 || filepath.Base(h.Paths[0]) != c.file || h.Start < c.from || h.Start > c.to || h.End <= h.Start {
			t.Errorf("search %s: %+v; want %s between %v s and %v s", c.word, h, c.file, c.from, c.to)
		}
	}
}
