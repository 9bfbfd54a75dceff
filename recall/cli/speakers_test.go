package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/internal/testkit"
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
			io.WriteString(w, `{"id":"j1","status":"completed","text":"Welcome back to the archive. Thanks, glad to be here.","audio_duration":1,"language_code":"en_us","words":[
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
// environment that reaches it, the recording's folder, and the job's
// request.
func interviewed(t *testing.T) (db string, env map[string]string, dir string, job func() map[string]any) {
	t.Helper()
	srv, job := assemblyAIWithSpeakers(t)
	db, env, dir = addedTalk(t)
	if r := run(t, env, "--db", db, "run", "talks", "--provider", "assemblyai", "--provider-url", srv.URL, "--speakers=2"); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	return db, env, dir, job
}

// TestSpeakersEndToEnd runs a batch with --speakers=2 through an
// AssemblyAI stand-in and exports it: the job asks for two speakers, and
// each format says who speaks: VTT as voices (docs/recall-archive.md
// shows it), SRT and text with the speaker's name where a turn starts,
// JSON per segment.
func TestSpeakersEndToEnd(t *testing.T) {
	t.Parallel()
	db, env, dir, job := interviewed(t)
	if j := job(); j["speaker_labels"] != true || j["speakers_expected"] != float64(2) {
		t.Errorf("the job asked for %v", j)
	}
	out := t.TempDir()
	export := func() {
		t.Helper()
		if r := run(t, env, "--db", db, "export", "talks", "--out", out); r.code != cli.ExitOK {
			t.Fatalf("export: %d %s", r.code, r.stderr)
		}
	}
	export()
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

	// Named afterwards, the speakers' names are the voices
	// (docs/recall-archive.md shows it too).
	if r := run(t, env, "--db", db, "speakers", "talks", filepath.Join(dir, "talk.mp3"), "A=Alice", "B=Bob"); r.code != cli.ExitOK {
		t.Fatalf("speakers: %d %s", r.code, r.stderr)
	}
	export()
	doccheck.Transcript(t, "recall-vtt-named", read("vtt"))

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

// TestNamedSpeakersEndToEnd runs a batch with --speakers through the
// built-in sandbox, which labels placeholder speakers A and B, lists them,
// names them with the real program, and finds the names in every export,
// in search and under search --speaker; naming sends and pays nothing.
func TestNamedSpeakersEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	talk := filepath.Join(dir, "talk.mp3")
	recording(t, talk)
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "add", "talks", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if r := run(t, env, "speakers", "talks", talk); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "no whole transcript yet") {
		t.Errorf("speakers before a run: exit %d, %q", r.code, r.stderr)
	}
	if r := run(t, env, "run", "talks", "--speakers"); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	spent := run(t, env, "status", "talks", "--json").stdout

	r := run(t, env, "speakers", "talks", talk, "--json")
	schematest.Check(t, "recall-archive/speakers.json", []byte(r.stdout))
	var listed struct {
		Provider string
		Speakers []struct {
			Label, Name string
			Segments    int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || listed.Provider != "sandbox" || len(listed.Speakers) != 2 ||
		listed.Speakers[0].Label != "A" || listed.Speakers[1].Label != "B" || listed.Speakers[0].Name != "" || listed.Speakers[0].Segments != 1 {
		t.Fatalf("speakers --json: %v\n%s", err, r.stdout)
	}
	if r := run(t, env, "speakers", "talks", talk); !strings.Contains(r.stdout, "2 speakers in its transcript by sandbox/whisper-1") ||
		!strings.Contains(r.stdout, "(no name: shown as Speaker A)") || !strings.Contains(r.stdout, "name them: recall-archive speakers talks") {
		t.Errorf("speakers:\n%s", r.stdout)
	}

	// Named by the program a person runs: a label as the exports show
	// it, case aside.
	named := exec.Command(testkit.Binary(t, "cmd/recall-archive"), "speakers", "talks", talk, "A=Alice", "speaker b=Bob & Co", "--json")
	named.Env = append(os.Environ(), cli.DBEnv+"="+env[cli.DBEnv])
	out, stderr, code := testkit.Run(t, named)
	schematest.Check(t, "recall-archive/speakers.json", []byte(out))
	if code != cli.ExitOK || !strings.Contains(out, `"name": "Alice"`) || !strings.Contains(out, `"name": "Bob \u0026 Co"`) || !strings.Contains(out, `"named": [`) {
		t.Fatalf("speakers A=Alice: exit %d\n%s%s", code, out, stderr)
	}
	if now := run(t, env, "status", "talks", "--json").stdout; now != spent {
		t.Errorf("naming the speakers changed the batch's status:\n%s\nwas\n%s", now, spent)
	}

	exported := t.TempDir()
	if r := run(t, env, "export", "talks", "--out", exported, "--include-sandbox"); r.code != cli.ExitOK {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	read := func(ext string) string {
		data, err := os.ReadFile(filepath.Join(exported, "talk."+ext))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if vtt := read("vtt"); !strings.Contains(vtt, "<v Alice>[sandbox] segment 1") || !strings.Contains(vtt, "<v Bob &amp; Co>[sandbox] segment 2") {
		t.Errorf("vtt:\n%s", vtt)
	}
	if srt := read("srt"); !strings.Contains(srt, "Alice: [sandbox] segment 1") || !strings.Contains(srt, "Bob & Co: [sandbox]") {
		t.Errorf("srt:\n%s", srt)
	}
	if txt := read("txt"); !strings.HasPrefix(txt, "Alice: [sandbox] segment 1") || !strings.Contains(txt, "\n\nBob & Co: ") {
		t.Errorf("txt:\n%s", txt)
	}
	var doc struct {
		Segments []struct {
			Speaker     string `json:"speaker"`
			SpeakerName string `json:"speaker_name"`
		} `json:"segments"`
	}
	if err := json.Unmarshal([]byte(read("json")), &doc); err != nil || len(doc.Segments) != 2 || doc.Segments[0].Speaker != "A" || doc.Segments[0].SpeakerName != "Alice" || doc.Segments[1].SpeakerName != "Bob & Co" {
		t.Errorf("json segments %+v, %v", doc.Segments, err)
	}

	// search --speaker keeps to one speaker, by name or by label.
	for who, want := range map[string]string{"alice": "Alice: [sandbox] [segment] 1", "B": "Bob & Co: [sandbox] [segment] 2", "Speaker B": "Bob & Co:", "": "2 matches", "Carol": "no matches in every batch, said by Carol"} {
		r := run(t, env, "search", "segment", "--include-sandbox", "--speaker", who)
		if r.code != cli.ExitOK || !strings.Contains(r.stdout, want) || who != "" && strings.Contains(r.stdout, "2 matches") {
			t.Errorf("search --speaker %q: exit %d, want %q\n%s%s", who, r.code, want, r.stdout, r.stderr)
		}
	}
	r = run(t, env, "search", "segment", "--include-sandbox", "--speaker", "Alice", "--json")
	schematest.Check(t, "recall-archive/search.json", []byte(r.stdout))
	if !strings.Contains(r.stdout, `"speaker": "A"`) || !strings.Contains(r.stdout, `"speaker_name": "Alice"`) || !strings.Contains(r.stdout, `"total": 1`) {
		t.Errorf("search --speaker --json:\n%s", r.stdout)
	}

	// A label the transcript does not give, or a name on two lines, is
	// refused and changes nothing; A= takes A's name away.
	for _, arg := range []string{"C=Carol", "A=Al\nice"} {
		if r := run(t, env, "speakers", "talks", talk, arg); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "A, B") && !strings.Contains(r.stderr, "one line") {
			t.Errorf("speakers %q: exit %d, %q", arg, r.code, r.stderr)
		}
	}
	if r := run(t, env, "speakers", "talks", talk, "A="); r.code != cli.ExitOK || !strings.Contains(r.stdout, "(no name: shown as Speaker A)") || !strings.Contains(r.stdout, "Bob & Co") {
		t.Errorf("speakers A=: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "speakers", "talks", talk, "Alice"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "write LABEL=NAME") {
		t.Errorf("speakers Alice: exit %d, %q; want a usage error", r.code, r.stderr)
	}
	if r := run(t, env, "speakers", "talks", filepath.Join(dir, "none.mp3")); r.code != cli.ExitFailure || !strings.Contains(r.stderr, `no recording "`) {
		t.Errorf("speakers of a file not in the batch: exit %d, %q", r.code, r.stderr)
	}
}
