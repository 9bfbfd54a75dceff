package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// terminal is a command run on a pseudo-terminal, as a person runs it.
type terminal struct {
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func startOnTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(term.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor waits until the output matches re, and returns how long it took.
func (term *terminal) waitFor(t *testing.T, re string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !regexp.MustCompile(re).MatchString(term.output()) {
		if time.Since(start) > within {
			t.Fatalf("no %s on the terminal within %v:\n%q", re, within, term.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// wait waits for the command to end, and returns its exit code.
func (term *terminal) wait(t *testing.T) int {
	t.Helper()
	err := term.cmd.Wait()
	select {
	case <-term.done:
	case <-time.After(5 * time.Second):
	}
	term.tty.Close()
	return exitCode(err)
}

// TestRunOnATerminal runs recall-archive run on a pseudo-terminal, against
// a provider that takes a second to answer: the bar is drawn before the
// first answer, names the files and their stages, and is redrawn in
// place; the first Ctrl-C (the terminal's, to the process group) is
// acknowledged at once, naming the request in flight, which then
// finishes; the run exits 130 with recordings waiting. Run again, it
// resumes and the bar reaches 3/3, the recording done before included.
func TestRunOnATerminal(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 3 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("talk %d.mp3", i)), 300+100*i, 2*time.Second)
	}
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(1500 * time.Millisecond) // the request is written; the provider takes its time
		sb.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer sb.Close()
	db := filepath.Join(t.TempDir(), "r.db")
	if out, err := exec.Command(bin, "--db", db, "add", "talks", rec).CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir(), "OPENAI_API_KEY=sk-test")
	runCmd := func() *exec.Cmd {
		cmd := exec.Command(bin, "--db", db, "run", "talks", "--provider", "openai", "--provider-url", srv.URL, "--workers", "1", "--budget", "1")
		cmd.Env = env
		return cmd
	}

	term := startOnTerminal(t, runCmd())
	term.waitFor(t, `0/3 recordings`, 5*time.Second)
	term.waitFor(t, `waiting for an answer +\S*talk \d\.mp3`, 10*time.Second)
	term.waitFor(t, `money: spent \$0\.000000, held \$0\.000[1-9]00 of a budget of \$1\.000000`, 5*time.Second)
	// The bar is redrawn over itself: the cursor goes back up its lines.
	term.waitFor(t, `\x1b\[\d+A\r\x1b\[J\[`, 5*time.Second)
	if _, err := term.tty.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if took := term.waitFor(t, `interrupted: .*Waiting for the 1 request in flight`, 5*time.Second); took > time.Second {
		t.Errorf("the interrupt was acknowledged after %v", took)
	}
	term.waitFor(t, `Ctrl-C again ends the run at once`, time.Second)
	if code := term.wait(t); code != 130 {
		t.Fatalf("an interrupted run with recordings waiting: exit %d, want 130\n%q", code, term.output())
	}
	out := term.output()
	if !strings.Contains(out, "1 recording done, 0 ambiguous, 0 failed safely") || !strings.Contains(out, "interrupted: run again to go on") {
		t.Fatalf("the interrupted run's report:\n%q", out)
	}
	if sb.Requests() != 1 {
		t.Fatalf("%d requests after the interrupt, want the one in flight", sb.Requests())
	}

	term = startOnTerminal(t, runCmd())
	if code := term.wait(t); code != 0 {
		t.Fatalf("the resumed run: exit %d\n%q", code, term.output())
	}
	out = term.output()
	if !strings.Contains(out, "[################] 3/3 recordings") || !strings.Contains(out, "1/3 recordings") || !strings.Contains(out, "3 recordings done") {
		t.Fatalf("the resumed run does not count the recording done before, or does not reach 3/3:\n%q", out)
	}
}

// TestAddOnATerminal: on a terminal, add shows the files probed and
// hashed, and the bytes read, as it goes; the report follows.
func TestAddOnATerminal(t *testing.T) {
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	var total int64
	for i := range 3 {
		path := filepath.Join(rec, fmt.Sprintf("talk %d.mp3", i))
		testkit.Tone(t, path, 300+100*i, 2*time.Second)
		st, _ := os.Stat(path)
		total += st.Size()
	}
	term := startOnTerminal(t, exec.Command(bin, "--db", filepath.Join(t.TempDir(), "r.db"), "add", "talks", rec))
	if code := term.wait(t); code != 0 {
		t.Fatalf("add exited %d:\n%q", code, term.output())
	}
	out := term.output()
	want := fmt.Sprintf("probed 3 of 3 files, hashed 3: %.1f kB", float64(total)/1e3)
	if !strings.Contains(out, want) || !strings.Contains(out, "batch talks: 3 files added") {
		t.Errorf("add on a terminal printed %q; want %q and the report", out, want)
	}
}
