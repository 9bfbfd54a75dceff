package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// assemblyAIWithSpeakers stands in for AssemblyAI: an upload, a job, and
// a completed transcript whose words carry speakers, as its spec's
// TranscriptWord does. It keeps the job's request.
func assemblyAIWithSpeakers(t *testing.T) (*httptest.Server, func() map[string]any) {
	var mu sync.Mutex
	var job map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/upload":
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, `{"upload_url":"https://cdn.assemblyai.com/upload/u-1"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/v2/transcript":
			mu.Lock()
			json.NewDecoder(r.Body).Decode(&job)
			mu.Unlock()
			io.WriteString(w, `{"id":"j1","status":"queued"}`)
		default:
			io.WriteString(w, `{"id":"j1","status":"completed","text":"Welcome back to the archive. Thanks, glad to be here.","audio_duration":1,"words":[
				{"text":"Welcome","start":0,"end":300,"confidence":0.9,"speaker":"A"},
				{"text":"back","start":300,"end":500,"confidence":0.9,"speaker":"A"},
				{"text":"to","start":500,"end":600,"confidence":0.9,"speaker":"A"},
				{"text":"the","start":600,"end":700,"confidence":0.9,"speaker":"A"},
				{"text":"archive.","start":700,"end":1200,"confidence":0.9,"speaker":"A"},
				{"text":"Thanks,","start":1400,"end":1800,"confidence":0.9,"speaker":"B"},
				{"text":"glad","start":1800,"end":2100,"confidence":0.9,"speaker":"B"},
				{"text":"to","start":2100,"end":2200,"confidence":0.9,"speaker":"B"},
				{"text":"be","start":2200,"end":2300,"confidence":0.9,"speaker":"B"},
				{"text":"here.","start":2300,"end":2700,"confidence":0.9,"speaker":"B"}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]any { mu.Lock(); defer mu.Unlock(); return job }
}

// addedTalk returns an archive whose batch talks holds one recording, the
// environment that reaches it with an AssemblyAI key, and the recording's
// folder.
func addedTalk(t *testing.T) (db string, env map[string]string, dir string) {
	t.Helper()
	dir = t.TempDir()
	recording(t, filepath.Join(dir, "talk.mp3"))
	db = filepath.Join(t.TempDir(), "r.db")
	env = map[string]string{"ASSEMBLYAI_API_KEY": "k", "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "--db", db, "add", "talks", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	return db, env, dir
}

// interviewed returns an archive whose batch talks holds one recording,
// transcribed with --speakers=2 by assemblyAIWithSpeakers, the
// environment that reaches it, and the job's request.
func interviewed(t *testing.T) (db string, env map[string]string, job func() map[string]any) {
	t.Helper()
	srv, job := assemblyAIWithSpeakers(t)
	db, env, _ = addedTalk(t)
	if r := run(t, env, "--db", db, "run", "talks", "--provider", "assemblyai", "--provider-url", srv.URL, "--speakers=2"); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	return db, env, job
}

// TestSpeakersEndToEnd runs a batch with --speakers=2 through an
// AssemblyAI stand-in and exports it: the job asks for two speakers, and
// each format says who speaks: VTT as voices (docs/recall-archive.md
// shows it), SRT and text with the speaker's name where a turn starts,
// JSON per segment.
func TestSpeakersEndToEnd(t *testing.T) {
	t.Parallel()
	db, env, job := interviewed(t)
	if j := job(); j["speaker_labels"] != true || j["speakers_expected"] != float64(2) {
		t.Errorf("the job asked for %v", j)
	}
	out := t.TempDir()
	if r := run(t, env, "--db", db, "export", "talks", "--out", out); r.code != cli.ExitOK {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	read := func(ext string) string {
		files, _ := filepath.Glob(filepath.Join(out, "**", "*."+ext))
		more, _ := filepath.Glob(filepath.Join(out, "*."+ext))
		files = append(files, more...)
		if len(files) != 1 {
			t.Fatalf("exported %v as %s", files, ext)
		}
		data, _ := os.ReadFile(files[0])
		return string(data)
	}
	doccheck.Transcript(t, "recall-vtt-speakers", read("vtt"))
	if srt := read("srt"); !strings.Contains(srt, "Speaker A: Welcome back") || !strings.Contains(srt, "Speaker B: Thanks,") {
		t.Errorf("srt:\n%s", srt)
	}
	if txt := read("txt"); txt != "Speaker A: Welcome back to the archive.\n\nSpeaker B: Thanks, glad to be here.\n" {
		t.Errorf("txt:\n%q", txt)
	}
	var doc struct {
		Segments []struct{ Speaker string } `json:"segments"`
	}
	if err := json.Unmarshal([]byte(read("json")), &doc); err != nil || len(doc.Segments) != 2 || doc.Segments[0].Speaker != "A" || doc.Segments[1].Speaker != "B" {
		t.Errorf("json segments %+v, %v", doc.Segments, err)
	}

	// A provider that labels no speakers refuses the flag before
	// anything is sent.
	if r := run(t, env, "--db", db, "run", "talks", "--provider", "openai", "--speakers"); r.code == cli.ExitOK || !strings.Contains(r.stderr, "labels no speakers") {
		t.Errorf("openai with --speakers: exit %d, %q", r.code, r.stderr)
	}
}

// TestHintFlags: --language, --prompt and --vocabulary reach the
// provider's request, and one it cannot take is refused before a key is
// read or anything sent, naming the flag.
func TestHintFlags(t *testing.T) {
	t.Parallel()
	srv, job := assemblyAIWithSpeakers(t)
	db, env, dir := addedTalk(t)
	vocab := filepath.Join(t.TempDir(), "terms.txt")
	os.WriteFile(vocab, []byte("# names\nRubicon\n\nrecall archive\n"), 0o644)
	if r := run(t, env, "--db", db, "run", "talks", "--provider", "assemblyai", "--provider-url", srv.URL,
		"--language", "en-AU", "--prompt", "A talk.", "--vocabulary", vocab); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if j := job(); j["language_code"] != "en_au" || j["prompt"] != "A talk." || len(j["keyterms_prompt"].([]any)) != 2 {
		t.Errorf("the job asked for %v", j)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "openai", "--language", "pt-BR"}, "two-letter ISO-639-1"},
		{[]string{"--provider", "deepgram", "--prompt", "x"}, "takes no prompt"},
		{[]string{"--provider", "assemblyai", "--vocabulary", filepath.Join(dir, "none.txt")}, "--vocabulary"},
	} {
		r := run(t, map[string]string{"XDG_CACHE_HOME": t.TempDir()}, append([]string{"--db", db, "run", "talks"}, c.args...)...)
		if r.code == cli.ExitOK || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "API key") {
			t.Errorf("%q: exit %d, %q; want a refusal with %q before the key", c.args, r.code, r.stderr, c.want)
		}
	}
}
