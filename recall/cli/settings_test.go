package cli_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestSettingsMakeTheTranscript runs a recording through an AssemblyAI
// stand-in without speakers, then asks for them: the run sends nothing,
// names the recording and the command that pays for a new transcript;
// estimate prices the speakers on their own line, as the prices file
// says; retranscribe shows that cost, sends one job with speaker labels
// and holds what estimate said; later runs with either settings send
// nothing; export writes the latest transcript and search finds both.
func TestSettingsMakeTheTranscript(t *testing.T) {
	t.Parallel()
	srv, job := assemblyAIWithSpeakers(t)
	var jobs atomic.Int32
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v2/transcript" {
			jobs.Add(1)
		}
		inner.ServeHTTP(w, r)
	})
	db, env, dir := addedTalk(t)
	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"assemblyai/universal-3-pro": {"options": {"speakers": "0.0003"}}}`), 0o600)
	base := []string{"--db", db}
	with := func(args ...string) []string {
		return append(append(append([]string{}, base...), args...), "--provider", "assemblyai", "--provider-url", srv.URL, "--prices", prices)
	}
	if r := run(t, env, with("run", "talks")...); r.code != cli.ExitOK || jobs.Load() != 1 {
		t.Fatalf("the first run: exit %d, %d jobs\n%s%s", r.code, jobs.Load(), r.stdout, r.stderr)
	}
	if _, asked := job()["speaker_labels"]; asked {
		t.Fatalf("the first job asked for speakers: %v", job())
	}

	r := run(t, env, with("run", "talks", "--speakers=2")...)
	if r.code != cli.ExitItemProblems || jobs.Load() != 1 ||
		!strings.Contains(r.stdout, "0 requests paid for in this run; 0 recordings done, 0 ambiguous, 0 failed safely, 0 refused by budget, 0 waiting, 1 transcribed with other settings") ||
		!strings.Contains(r.stdout, "talk.mp3\" by assemblyai/universal-3-pro with its default settings") ||
		!strings.Contains(r.stdout, "'recall-archive retranscribe talks --provider assemblyai --model universal-3-pro --provider-url "+srv.URL+" --speakers=2' shows the cost first") ||
		!strings.Contains(r.stderr, "transcribed with other settings (assemblyai/universal-3-pro with its default settings): not sent") {
		t.Fatalf("a run asking for speakers: exit %d, %d jobs\n%s%s", r.code, jobs.Load(), r.stdout, r.stderr)
	}
	// As docs/recall-archive.md shows it, without the stand-in's URL.
	doccheck.Transcript(t, "recall-run-other-settings", strings.NewReplacer(dir, "/rec", " --provider-url "+srv.URL, "").Replace(r.stdout))

	// A second of audio and a little more, billed as 2 s at $0.0035 a
	// minute, and at $0.0003 for the speakers.
	r = run(t, env, with("estimate", "talks", "--speakers=2")...)
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "$0.000127 at $0.003500 a minute (assemblyai/universal-3-pro with speakers=2)") ||
		!strings.Contains(r.stdout, "  of which speakers: $0.000010, at $0.000300 a minute on top") ||
		!strings.Contains(r.stdout, "not yet transcribed by assemblyai/universal-3-pro with speakers=2: 1 recording, 1s, $0.000127") ||
		!strings.Contains(r.stdout, "of which 1 recording transcribed with other settings: a run leaves them") {
		t.Fatalf("estimate with speakers: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	doccheck.Transcript(t, "recall-estimate-options", r.stdout)
	r = run(t, env, with("estimate", "talks", "--speakers=2", "--json")...)
	var est struct {
		Settings string `json:"settings"`
		Cost     int64  `json:"cost_micro_usd"`
		Options  []struct {
			Option string `json:"option"`
			Cost   int64  `json:"cost_micro_usd"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &est); err != nil || est.Settings != "speakers=2" || est.Cost != 127 || len(est.Options) != 1 || est.Options[0].Option != "speakers" || est.Options[0].Cost != 10 {
		t.Fatalf("estimate --json: %+v, %v\n%s", est, err, r.stdout)
	}

	r = run(t, env, with("retranscribe", "talks", "--speakers=2", "--yes")...)
	if r.code != cli.ExitOK || jobs.Load() != 2 || job()["speaker_labels"] != true || job()["speakers_expected"] != float64(2) ||
		!strings.Contains(r.stderr, "1 of its 1 recording not yet transcribed by assemblyai/universal-3-pro with speakers=2: 1s of audio, $0.000127") ||
		!strings.Contains(r.stderr, "  of which speakers: $0.000010") || !strings.Contains(r.stdout, "1 request paid for in this run; 1 recording done") ||
		!strings.Contains(r.stdout, "money: spent $0.000244") {
		t.Fatalf("retranscribe with speakers: exit %d, %d jobs, %v\n%s%s", r.code, jobs.Load(), job(), r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"run", "talks", "--speakers=2"}, {"run", "talks"}, {"retranscribe", "talks", "--speakers=2", "--yes"}} {
		if r := run(t, env, with(args...)...); r.code != cli.ExitOK || jobs.Load() != 2 || strings.Contains(r.stdout, "other settings") {
			t.Errorf("%q after both: exit %d, %d jobs\n%s%s", args, r.code, jobs.Load(), r.stdout, r.stderr)
		}
	}

	out := t.TempDir()
	if r := run(t, env, "--db", db, "export", "talks", "--out", out, "--format", "json"); r.code != cli.ExitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 {
		t.Fatalf("exported %v", files)
	}
	if data, _ := os.ReadFile(files[0]); !strings.Contains(string(data), `"settings": "speakers=2"`) || !strings.Contains(string(data), `"speaker": "B"`) {
		t.Errorf("the export is not the transcript with speakers:\n%s", data)
	}
	// Either transcript on request, by the flags that made it; one that
	// was never made is counted, and the command that makes it shown.
	for _, c := range []struct {
		flags    []string
		settings string
	}{{nil, ""}, {[]string{"--speakers=2"}, "speakers=2"}} {
		out := t.TempDir()
		r := run(t, env, append([]string{"--db", db, "export", "talks", "--out", out, "--format", "json", "--provider", "assemblyai", "--json"}, c.flags...)...)
		var rep struct {
			Recordings  int    `json:"recordings"`
			Transcriber string `json:"transcriber"`
			Without     *int   `json:"without_transcript"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != cli.ExitOK || err != nil || rep.Recordings != 1 || rep.Without == nil || *rep.Without != 0 {
			t.Fatalf("export by assemblyai %q: exit %d, %+v, %v\n%s%s", c.flags, r.code, rep, err, r.stdout, r.stderr)
		}
		schematest.Check(t, "recall-archive/export.json", []byte(r.stdout))
		data, _ := os.ReadFile(filepath.Join(out, "talk.json"))
		var doc struct {
			Settings string `json:"settings"`
		}
		if err := json.Unmarshal(data, &doc); err != nil || doc.Settings != c.settings {
			t.Errorf("export by assemblyai %q wrote the transcript with settings %q, %v", c.flags, doc.Settings, err)
		}
	}
	out = t.TempDir()
	r = run(t, env, "--db", db, "export", "talks", "--out", out, "--provider", "deepgram", "--language", "pt-BR")
	if names, _ := filepath.Glob(filepath.Join(out, "*")); r.code != cli.ExitOK || len(names) != 0 ||
		!strings.Contains(r.stdout, "wrote the transcripts of 0 recordings (0 files)") ||
		!strings.Contains(r.stdout, "1 recording of the batch without a whole transcript by deepgram/nova-3 with language=pt-br, not written: 'recall-archive retranscribe talks --provider deepgram --model nova-3 --language pt-BR' makes them, priced first") {
		t.Errorf("export by a provider that transcribed nothing: exit %d, wrote %v\n%s%s", r.code, names, r.stdout, r.stderr)
	}
	if r := run(t, env, "--db", db, "export", "talks", "--out", out, "--speakers"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "give --provider too") {
		t.Errorf("export with settings and no provider: exit %d\n%s", r.code, r.stderr)
	}
	// Both transcripts are in the language AssemblyAI detected.
	if r := run(t, env, with("status", "talks")...); !strings.Contains(r.stdout, "  languages: en-US 1 (recordings transcribed in each, as detected or asked)\n") {
		t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, env, "--db", db, "search", "archive")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "(assemblyai/universal-3-pro)") || !strings.Contains(r.stdout, "(assemblyai/universal-3-pro with speakers=2)") {
		t.Errorf("search: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
