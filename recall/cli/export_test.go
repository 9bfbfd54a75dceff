package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestExportKeepsTheFolderTree exports a batch of recordings in folders:
// each transcript beside where its recording was, named as a player looks
// for it, with a name two files would share told apart the same way on
// every export.
func TestExportKeepsTheFolderTree(t *testing.T) {
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "talks", "talk.mp3"))
	recording(t, filepath.Join(dir, "talks", "day 2", "talk.mp3")) // the same content in another folder
	if b, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=300:duration=2",
		filepath.Join(dir, "talks", "talk.wav")).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir()}
	for _, args := range [][]string{{"add", "b", filepath.Join(dir, "talks")}, {"run", "b"}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	want := []string{"day 2/talk.srt", "day 2/talk.txt", "talk.srt", "talk.txt", "talk.wav.srt", "talk.wav.txt"}
	for range 2 {
		out := t.TempDir()
		r := run(t, env, "export", "b", "--out", out, "--format", "srt,txt", "--include-sandbox", "--json")
		if r.code != cli.ExitOK {
			t.Fatalf("export: %d %s", r.code, r.stderr)
		}
		schematest.Check(t, "recall-archive/export.json", []byte(r.stdout))
		var rep struct {
			Recordings int `json:"recordings"`
			Files      []struct {
				Path    string   `json:"path"`
				Written []string `json:"written"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Recordings != 2 || len(rep.Files) != 3 {
			t.Fatalf("export --json: %v\n%s", err, r.stdout)
		}
		var got []string
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(out, p)
				got = append(got, filepath.ToSlash(rel))
			}
			return err
		})
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("exported %q, want %q", got, want)
		}
		srt, _ := os.ReadFile(filepath.Join(out, "talk.srt"))
		if !strings.HasPrefix(string(srt), "1\n00:00:00,000 --> ") {
			t.Errorf("talk.srt:\n%s", srt)
		}
	}
	if text := run(t, env, "export", "b", "--out", t.TempDir(), "--include-sandbox").stdout; !strings.HasPrefix(text, "wrote the transcripts of 2 recordings (3 files) to ") {
		t.Errorf("export said %q", text)
	}
}
