package cli_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// answering runs the binary bin with stdin as its standard input.
func answering(t *testing.T, bin, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := exitCode(err)
	if code < 0 {
		t.Fatalf("%q: %v", args, err)
	}
	return result{code, out.String(), errOut.String()}
}

// TestTrialWithTheSandboxThenARealProvider runs the binary as a new user
// would: a first plain run uses the built-in sandbox; its placeholders are
// not exported or searched unless asked; estimate prices openai's work,
// retranscribe shows it, asks, and transcribes with openai once agreed,
// and never again.
func TestTrialWithTheSandboxThenARealProvider(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 2 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 300+100*i, 3*time.Second)
	}
	real := sandbox.New(sandbox.Options{}) // stands in for openai
	srv := httptest.NewServer(real)
	t.Cleanup(func() { real.Close(); srv.Close() })
	env := []string{"RECALL_DB=" + filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-test"}
	if r := binary(t, bin, env, "add", "bb", rec); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if r := binary(t, bin, env, "run", "bb"); r.code != 0 || !strings.Contains(r.stdout, "2 recordings done") {
		t.Fatalf("the trial run with the sandbox: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := t.TempDir()
	if r := binary(t, bin, env, "export", "bb", "--out", out); r.code != 0 || !strings.Contains(r.stdout, "of 0 recordings") {
		t.Fatalf("export after the trial: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "export", "bb", "--out", out, "--include-sandbox"); r.code != 0 || !strings.Contains(r.stdout, "of 2 recordings") {
		t.Fatalf("export --include-sandbox: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "search", "segment"); !strings.Contains(r.stdout, "no matches") {
		t.Fatalf("search found the sandbox's placeholders:\n%s%s", r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "search", "segment", "--include-sandbox"); !strings.Contains(r.stdout, "(sandbox/whisper-1)") {
		t.Fatalf("search --include-sandbox:\n%s%s", r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "estimate", "bb", "--provider", "openai"); !strings.Contains(r.stdout, "not yet transcribed by openai/whisper-1: 2 recordings, 6s, $0.000800") {
		t.Fatalf("estimate --provider openai:\n%s%s", r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "retranscribe", "bb"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--provider") {
		t.Fatalf("retranscribe without --provider: exit %d\n%s", r.code, r.stderr)
	}
	args := []string{"retranscribe", "bb", "--provider", "openai", "--provider-url", srv.URL}
	r := answering(t, bin, "n\n", env, args...)
	if r.code != 0 || !strings.Contains(r.stderr, "2 of its 2 recordings not yet transcribed by openai/whisper-1: 6s of audio, $0.000800") ||
		!strings.Contains(r.stderr, "nothing sent") || len(real.Charges()) != 0 {
		t.Fatalf("retranscribe, declined: exit %d, %d charges\n%s%s", r.code, len(real.Charges()), r.stdout, r.stderr)
	}
	if r := answering(t, bin, "", env, args...); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "--yes") || len(real.Charges()) != 0 {
		t.Fatalf("retranscribe without an answer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := answering(t, bin, "y\n", env, args...); r.code != 0 || !strings.Contains(r.stdout, "2 requests paid for in this run; 2 recordings done") || len(real.Charges()) != 2 {
		t.Fatalf("retranscribe, agreed: exit %d, %d charges\n%s%s", r.code, len(real.Charges()), r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, append(args, "--yes")...); r.code != 0 || !strings.Contains(r.stderr, "nothing to transcribe") || len(real.Charges()) != 2 {
		t.Fatalf("retranscribe once more: exit %d, %d charges\n%s%s", r.code, len(real.Charges()), r.stdout, r.stderr)
	}
	if r := binary(t, bin, env, "run", "bb", "--provider", "openai", "--provider-url", srv.URL); r.code != 0 || !strings.Contains(r.stdout, "0 requests paid") {
		t.Fatalf("a run with openai after it: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	real2 := t.TempDir()
	if r := binary(t, bin, env, "export", "bb", "--out", real2, "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, "of 2 recordings") {
		t.Fatalf("export after openai: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(real2, "*.json"))
	for _, f := range files {
		if data, _ := os.ReadFile(f); !strings.Contains(string(data), `"provider": "openai"`) {
			t.Errorf("%s is not openai's transcript:\n%s", f, data)
		}
	}
}
