package concurrency_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// concurrentFiles is the size of the concurrency test's batch, of which
// concurrentCopies are copies of other files under another name.
const concurrentFiles, concurrentCopies = 40, 6

// recordings writes the concurrency test's batch: short tones, each its
// own content, and copies of some of them.
func recordings(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	distinct := concurrentFiles - concurrentCopies
	for i := range distinct {
		path := filepath.Join(dir, fmt.Sprintf("tone %02d.mp3", i))
		testkit.Tone(t, path, 200+20*i, time.Duration(1+i%2)*time.Second, "-ac", "1")
	}
	for i := range concurrentCopies {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("tone %02d.mp3", i*5)))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("copy of tone %02d.mp3", i*5)), b, 0o644)
	}
	return dir
}

// TestConcurrentRuns runs two and four `recall-archive run` processes at
// once on one batch, on one SQLite file and on PostgreSQL, with a cold
// cache (the four on PostgreSQL with one cache per two, as on two machines),
// against a sandbox that drops, refuses and fails some requests. By the
// sandbox's own count: no chunk is paid for twice, nothing empty is
// uploaded, and every recording ends done, ambiguous (listed by
// `ambiguous`) or failed with a reason; no process shows a raw database
// conflict or a missing temporary file.
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := recordings(t)
	for _, backend := range testdb.Backends() {
		for _, procs := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d-processes", backend.Name, procs), func(t *testing.T) {
				dsn := backend.DSN(t)
				plan := sandbox.Plan{Rates: map[sandbox.Fault]float64{sandbox.ChargeDrop: 0.03, sandbox.TooMany: 0.05, sandbox.Status500: 0.03}, Seed: uint64(procs)}
				// Without ffprobe the sandbox measures uploads by their size:
				// an empty one is as empty, and the test's machine does less.
				sb := sandbox.New(sandbox.Options{Plan: plan, Tools: media.Tools{FFprobe: "rubicon-no-ffprobe"}})
				srv := httptest.NewServer(sb)
				defer srv.Close()
				defer sb.Close()
				if out, err := exec.Command(bin, "--db", dsn, "add", "b", rec).CombinedOutput(); err != nil {
					t.Fatalf("add: %v\n%s", err, out)
				}
				caches := []string{t.TempDir()}
				if backend.Name == "postgres" && procs > 2 {
					caches = append(caches, t.TempDir())
				}
				outs := make([]bytes.Buffer, procs)
				codes := make([]int, procs)
				var wg sync.WaitGroup
				for i := range procs {
					cmd := exec.Command(bin, "--db", dsn, "--json", "run", "b", "--provider-url", srv.URL,
						"--workers", "4", "--timeout", "5s", "--lease", "10s")
					cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+caches[i%len(caches)])
					cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					wg.Go(func() { codes[i] = exitCode(cmd.Wait()) })
				}
				wg.Wait()
				for i := range procs {
					out := outs[i].String()
					if c := codes[i]; c != 0 && c != 3 && c != 4 {
						t.Errorf("process %d exited %d:\n%s", i, c, out)
					}
					for _, bad := range []string{"SQLSTATE", "duplicate key", "no such file", ".partial", "conflicted"} {
						if strings.Contains(out, bad) {
							t.Errorf("process %d says %q:\n%s", i, bad, out)
						}
					}
				}
				for _, cache := range caches {
					if left, _ := filepath.Glob(filepath.Join(cache, "recall-archive", "*.partial")); len(left) > 0 {
						t.Errorf("partial files left in the cache: %v", left)
					}
				}
				paid, dup := checkConcurrent(t, dsn, sb)
				t.Logf("figures: backend=%s processes=%d files=%d contents=%d requests=%d paid=%d duplicates=%d empty_uploads=%d",
					backend.Name, procs, concurrentFiles, concurrentFiles-concurrentCopies, sb.Requests(), paid, dup, sb.EmptyUploads())
			})
		}
	}
}

// checkConcurrent checks the archive against the sandbox's charges, and
// returns how many requests were paid for and how many twice.
func checkConcurrent(t *testing.T, dsn string, sb *sandbox.Server) (paid, duplicates int) {
	t.Helper()
	ctx := context.Background()
	a, err := recall.Open(ctx, dsn, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n := sb.EmptyUploads(); n != 0 {
		t.Errorf("%d empty uploads reached the provider", n)
	}
	charged := map[string]int{}
	for _, c := range sb.Charges() {
		charged[c.Tag]++
		paid++
	}
	for key, n := range charged {
		if n > 1 {
			duplicates += n - 1
			t.Errorf("%s was paid for %d times", key, n)
		}
	}
	ops, err := a.Operations(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]journal.Operation{}
	for _, op := range ops {
		state[op.Key] = op
		if op.State == journal.Applied && charged[op.Key] != 1 {
			t.Errorf("%s is applied, and the sandbox charged it %d times", op.Key, charged[op.Key])
		}
	}
	for key := range charged {
		if _, ok := state[key]; !ok {
			t.Errorf("the sandbox charged %s, which the archive does not know", key)
		}
	}
	progress, err := a.Store().Progress(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != concurrentFiles-concurrentCopies {
		t.Errorf("%d contents in the batch, want %d", len(progress), concurrentFiles-concurrentCopies)
	}
	ambiguous, err := a.Ambiguous(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, item := range ambiguous {
		listed[strings.Split(item.Key, "/")[1]] = true
	}
	for sha, p := range progress {
		switch p {
		case recording.Done:
		case recording.Ambiguous:
			if !listed[sha] {
				t.Errorf("content %s is ambiguous but not listed by ambiguous", sha[:12])
			}
		case recording.FailedSafely:
			why := false
			for _, op := range ops {
				if strings.Contains(op.Subject, sha) && (op.State == journal.FailedSafe || op.State == journal.NotApplied) && op.LastError != "" {
					why = true
				}
			}
			if !why {
				t.Errorf("content %s failed without a reason", sha[:12])
			}
		default:
			t.Errorf("content %s is left %s after every run ended", sha[:12], p)
		}
	}
	return paid, duplicates
}
