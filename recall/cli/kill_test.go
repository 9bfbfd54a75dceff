package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestKillRunAtRandomMoments kills `recall-archive run` with SIGKILL at a
// random moment, runs it again, and checks that nothing was lost, nothing
// was charged twice, and the ledger equals the provider's charges plus the
// holds of ambiguous requests.
func TestKillRunAtRandomMoments(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 6 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 200+50*i, time.Duration(1+i%3)*time.Second)
	}
	const runs = 8
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 3))
	t.Logf("seed %d", seed)
	for run := range runs {
		sb := sandbox.New(sandbox.Options{Plan: sandbox.Plan{Rates: map[sandbox.Fault]float64{sandbox.ChargeDrop: 0.15}, Seed: uint64(run)}})
		srv := httptest.NewServer(sb)
		db := filepath.Join(t.TempDir(), "r.db")
		env := append(os.Environ(), "RECALL_DB="+db, "XDG_CACHE_HOME="+t.TempDir())
		args := []string{"run", "b", "--provider-url", srv.URL, "--workers", "3", "--timeout", "1s", "--lease", "1100ms"}

		if out, err := exec.Command(bin, "--db", db, "add", "b", rec).CombinedOutput(); err != nil {
			t.Fatalf("add: %v\n%s", err, out)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		time.Sleep(1150 * time.Millisecond) // the killed run's leases run out

		again := exec.Command(bin, args...)
		again.Env = env
		out, err := again.CombinedOutput()
		if code := exitCode(err); code != 0 && code != 3 {
			t.Fatalf("run %d: the second run exited %d\n%s", run, code, out)
		}
		checkAfterKill(t, run, db, sb)
		sb.Close()
		srv.Close()
		if t.Failed() {
			t.Fatalf("run %d (seed %d) failed", run, seed)
		}
	}
}

func checkAfterKill(t *testing.T, run int, db string, sb *sandbox.Server) {
	t.Helper()
	ctx := context.Background()
	a, err := recall.Open(ctx, db, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ops, err := a.Operations(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 6 {
		t.Errorf("run %d: %d requests planned for 6 recordings", run, len(ops))
	}
	charged := map[string]int{}
	var chargedApplied ledger.Amount
	for _, c := range sb.Charges() {
		charged[c.Tag]++
	}
	for _, op := range ops {
		switch {
		case charged[op.Key] > 1:
			t.Errorf("run %d: %s was charged %d times", run, op.Key, charged[op.Key])
		case op.State == journal.Applied && charged[op.Key] != 1:
			t.Errorf("run %d: %s applied but charged %d times", run, op.Key, charged[op.Key])
		case op.State != journal.Applied && op.State != journal.Ambiguous:
			t.Errorf("run %d: %s left %s", run, op.Key, op.State)
		}
		if op.State == journal.Applied {
			for _, c := range sb.Charges() {
				if c.Tag == op.Key {
					chargedApplied += c.Amount
				}
			}
		}
	}
	m, err := a.Money(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox's charges are play money: counted apart, none of it spent.
	if m.Play.Spent != chargedApplied || m.Spent != 0 || m.Held != 0 {
		t.Errorf("run %d: ledger %+v; the sandbox charged %d of play money for applied requests", run, m, chargedApplied)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestInterruptFinishesWhatIsInFlight sends SIGINT to a run while its
// first request hangs at the provider: the run takes no new recording, the
// request in flight ends (here by its timeout, ambiguous), and the process
// exits saying so; the rest wait for the next run.
func TestInterruptFinishesWhatIsInFlight(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 3 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 300+100*i, time.Second)
	}
	plan, _ := sandbox.ParsePlan("1:hang")
	sb := sandbox.New(sandbox.Options{Plan: plan})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	db := filepath.Join(t.TempDir(), "r.db")
	if out, err := exec.Command(bin, "--db", db, "add", "b", rec).CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--db", db, "run", "b", "--provider-url", srv.URL, "--workers", "1", "--timeout", "1500ms")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the hanging request to arrive, then interrupt.
	for deadline := time.Now().Add(10 * time.Second); sb.Requests() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run sent nothing")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if code := exitCode(err); code != 3 {
		t.Fatalf("exit %d after an interrupt with a request in flight; want 3 (ambiguous)\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "interrupted") || sb.Requests() != 1 {
		t.Fatalf("after the interrupt: %d requests\n%s", sb.Requests(), out.String())
	}
	a, err := recall.Open(context.Background(), db, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, _ := a.Status(context.Background(), "b")
	if st.Transcription["ambiguous"] != 1 || st.Transcription["waiting"] != 2 {
		t.Fatalf("after the interrupt: %+v, want 1 ambiguous and 2 waiting", st.Transcription)
	}
}

// TestUnreadableFileIsReportedAndTheBatchGoesOn runs add on a folder with
// a file its user cannot read. As root, which reads everything, it runs
// add as the user nobody.
func TestUnreadableFileIsReportedAndTheBatchGoesOn(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	dir := t.TempDir()
	work := t.TempDir()
	for _, name := range []string{"ok.mp3", "locked.mp3"} {
		testkit.Tone(t, filepath.Join(dir, name), map[string]int{"ok.mp3": 300, "locked.mp3": 500}[name], time.Second)
	}
	os.Chmod(filepath.Join(dir, "locked.mp3"), 0)
	cmd := exec.Command(bin, "--db", filepath.Join(work, "r.db"), "--json", "add", "b", dir)
	if os.Geteuid() == 0 {
		// nobody must reach the binary, the folder and the database.
		for _, d := range []string{filepath.Dir(bin), dir, work, filepath.Dir(dir), filepath.Dir(work)} {
			os.Chmod(d, 0o777)
		}
		os.Chmod(filepath.Join(dir, "ok.mp3"), 0o644)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = append(os.Environ(), "HOME="+work, "XDG_CACHE_HOME="+work)
	}
	out, err := cmd.Output()
	if code := exitCode(err); code != 4 {
		t.Fatalf("add with an unreadable file: exit %d, want 4\n%s", code, out)
	}
	var rep struct {
		Added    int `json:"added"`
		Problems []struct{ Path, State, Error string }
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Added != 1 || len(rep.Problems) != 1 || !strings.HasSuffix(rep.Problems[0].Path, "locked.mp3") ||
		!strings.Contains(rep.Problems[0].Error, "permission denied") || rep.Problems[0].State != "failed" {
		t.Fatalf("report %+v: want ok.mp3 added and locked.mp3 failed (retryable) with permission denied", rep)
	}
}
