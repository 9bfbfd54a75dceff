package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }})
	return result{code, out.String(), errOut.String()}
}

func recording(t *testing.T, path string) {
	t.Helper()
	testkit.Tone(t, path, 440, time.Second)
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"frobnicate"}, {"add", "only-a-batch"}, {"status"}, {"--nope"}, {"add", "--nope", "b", "p"}} {
		r := run(t, nil, args...)
		if r.code != cli.ExitUsage || r.stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want %d and an explanation", args, r.code, r.stderr, cli.ExitUsage)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "add"}} {
		r := run(t, nil, args...)
		if r.code != cli.ExitOK || !strings.Contains(r.stdout+r.stderr, "usage: recall-archive") {
			t.Errorf("%q: exit %d, output %q", args, r.code, r.stdout+r.stderr)
		}
	}
	if r := run(t, nil, "help", "add"); !strings.Contains(r.stderr+r.stdout, "exit codes") {
		t.Errorf("help add does not document the exit codes")
	}
}

func TestAddAndStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	os.WriteFile(filepath.Join(dir, "fake.wav"), []byte("text"), 0o644)
	db := filepath.Join(t.TempDir(), "r.db")

	r := run(t, nil, "--db", db, "add", "--json", "b", dir)
	if r.code != cli.ExitItemProblems {
		t.Fatalf("add with one bad file: exit %d (%s)", r.code, r.stderr)
	}
	var rep struct {
		Added    int `json:"added"`
		Problems []struct {
			Path, State, Error string
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Added != 1 || len(rep.Problems) != 1 || !strings.HasSuffix(rep.Problems[0].Path, "fake.wav") {
		t.Fatalf("add --json: %+v, %v\n%s", rep, err, r.stdout)
	}

	// RECALL_DB selects the database when --db is absent.
	r = run(t, map[string]string{cli.DBEnv: db}, "status", "b")
	if r.code != cli.ExitOK || !strings.Contains(r.stdout, "1 added") || !strings.Contains(r.stdout, "fake.wav") {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, map[string]string{cli.DBEnv: db}, "status", "nope")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, `"nope"`) {
		t.Fatalf("status of an unknown batch: exit %d, %q", r.code, r.stderr)
	}
}

func TestDefaultDatabaseIsInTheDataDirectory(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	r := run(t, map[string]string{"XDG_DATA_HOME": data}, "add", "b", dir)
	if r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "recall-archive", "recall.db")); err != nil {
		t.Fatalf("no database in the data directory: %v", err)
	}
}

func TestUnwritableDatabaseIsAClearFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	r := run(t, nil, "--db", filepath.Join(dir, "missing", "r.db"), "add", "b", dir)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("exit %d, %q", r.code, r.stderr)
	}
}

// TestBinaryExitCodes runs the real program.
func TestBinaryExitCodes(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	db := filepath.Join(t.TempDir(), "r.db")
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"--db", db, "add", "b", dir}, cli.ExitOK},
		{[]string{"--db", db, "status", "b"}, cli.ExitOK},
		{[]string{"--db", db, "status", "c"}, cli.ExitFailure},
		{[]string{"bogus"}, cli.ExitUsage},
	} {
		if _, _, code := testkit.Run(t, exec.Command(bin, tt.args...)); code != tt.code {
			t.Errorf("%q: exit %d, want %d", tt.args, code, tt.code)
		}
	}
}

// TestSandboxCommand runs the standalone sandbox: it refuses connections
// for a while, then answers and keeps its charges.
func TestSandboxCommand(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	sandbox := testkit.Start(t, exec.Command(bin, "sandbox", "--addr", addr, "--refuse-for", "500ms", "--faults", "1:503"))
	if _, err := http.Get("http://" + addr + "/v1/sandbox/charges"); err == nil {
		t.Fatal("the sandbox answered during its refusal")
	}
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/v1/sandbox/charges"); err == nil {
			break
		}
	}
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the sandbox never came up: %v\n%s", err, sandbox.Stderr())
	}
	resp.Body.Close()
	if r := run(t, nil, "sandbox", "--faults", "9:explode"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "explode") {
		t.Fatalf("an unknown fault: %d %q", r.code, r.stderr)
	}
}

// commandNames returns the commands the program's help lists.
func commandNames(t *testing.T, help string) []string {
	t.Helper()
	_, list, _ := strings.Cut(help, "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		names = append(names, strings.Fields(line)[0])
	}
	if len(names) < 12 {
		t.Fatalf("the help lists %d commands:\n%s", len(names), help)
	}
	return names
}

// TestHelpOfEveryCommand checks that 'help COMMAND' is 'COMMAND --help'
// for every command, and that it lists the command's own flags (help run
// once listed only --db and --json) and the exit codes.
func TestHelpOfEveryCommand(t *testing.T) {
	t.Parallel()
	for _, name := range commandNames(t, run(t, nil, "help").stdout) {
		h, f := run(t, nil, "help", name), run(t, nil, name, "--help")
		if h.code != cli.ExitOK || f.code != cli.ExitOK || h.stdout != f.stdout || !strings.HasPrefix(h.stdout, "usage: recall-archive "+name+" ") {
			t.Errorf("help %s (exit %d) and %s --help (exit %d) differ:\n%s\n---\n%s", name, h.code, name, f.code, h.stdout, f.stdout)
		}
		if !strings.Contains(h.stdout, "  3  done, with ambiguous items") || !strings.Contains(h.stdout, "-h, --help") {
			t.Errorf("help %s lacks the exit codes or its flags:\n%s", name, h.stdout)
		}
	}
	h := run(t, nil, "help", "run").stdout
	for _, flag := range []string{"--budget DOLLARS", "--workers N", "--provider PROVIDER", "--provider-url URL", "--lease DURATION", "--db DSN", "--json"} {
		if !strings.Contains(h, flag) {
			t.Errorf("help run lacks %s:\n%s", flag, h)
		}
	}
}

// TestAmbiguousExitCodeWithJSON checks that ambiguous exits 3 when there
// are ambiguous requests, with --json too (it once exited 0 there).
func TestAmbiguousExitCodeWithJSON(t *testing.T) {
	t.Parallel()
	env, _ := ambiguousArchive(t)
	for _, args := range [][]string{{"ambiguous"}, {"ambiguous", "--json"}, {"--json", "ambiguous", "b"}} {
		r := run(t, env, args...)
		if r.code != cli.ExitAmbiguous {
			t.Errorf("%q: exit %d, want %d", args, r.code, cli.ExitAmbiguous)
		}
		var items []json.RawMessage
		if args[len(args)-1] != "ambiguous" && (json.Unmarshal([]byte(r.stdout), &items) != nil || len(items) != 1) {
			t.Errorf("%q: %s", args, r.stdout)
		}
	}
	if r := run(t, env, "ambiguous", "--json", "other"); r.code != cli.ExitOK || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("ambiguous of a batch without any: exit %d, %q", r.code, r.stdout)
	}
}
