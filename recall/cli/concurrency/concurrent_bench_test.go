package concurrency_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// BenchmarkConcurrentRuns transcribes the concurrency test's batch (40
// files, 34 recordings) with `recall-archive run` processes against a
// sandbox that answers each request after 1 s, so that the provider's
// latency dominates: 1 process × 4 workers (the baseline), 2 × 4, and
// 1 × 8 (the same concurrency as 2 × 4 in one process). Proxies are in
// the cache already; each iteration starts from a new database. Compare
// recordings/s: 2 × 4 against 1 × 8 shows the cost of coordinating two
// processes through the database.
func BenchmarkConcurrentRuns(b *testing.B) {
	bin := testkit.Binary(b, "cmd/recall-archive")
	rec := recordings(b)
	// Without ffprobe the sandbox measures uploads by their size, which
	// keeps its own work out of the figures.
	sb := sandbox.New(sandbox.Options{Latency: time.Second, Tools: media.Tools{FFprobe: "rubicon-no-ffprobe"}})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	cacheHome := b.TempDir()
	contents := concurrentFiles - concurrentCopies
	warm := filepath.Join(b.TempDir(), "warm.db")
	if out, err := exec.Command(bin, "--db", warm, "add", "b", rec).CombinedOutput(); err != nil {
		b.Fatalf("add: %v\n%s", err, out)
	}
	fill := exec.Command(bin, "--db", warm, "run", "b", "--provider-url", srv.URL)
	fill.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
	if out, err := fill.CombinedOutput(); err != nil {
		b.Fatalf("filling the cache: %v\n%s", err, out)
	}
	for _, backend := range testdb.Backends() {
		for _, shape := range []struct{ procs, workers int }{{1, 4}, {2, 4}, {1, 8}} {
			b.Run(fmt.Sprintf("%s/%dx%d", backend.Name, shape.procs, shape.workers), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					dsn := backend.DSN(b)
					if out, err := exec.Command(bin, "--db", dsn, "add", "b", rec).CombinedOutput(); err != nil {
						b.Fatalf("add: %v\n%s", err, out)
					}
					b.StartTimer()
					var wg sync.WaitGroup
					for range shape.procs {
						cmd := exec.Command(bin, "--db", dsn, "run", "b", "--provider-url", srv.URL, "--workers", fmt.Sprint(shape.workers))
						cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
						wg.Go(func() {
							if out, err := cmd.CombinedOutput(); err != nil {
								b.Errorf("run: %v\n%s", err, out)
							}
						})
					}
					wg.Wait()
				}
				b.ReportMetric(float64(contents*b.N)/b.Elapsed().Seconds(), "recordings/s")
			})
		}
	}
}
