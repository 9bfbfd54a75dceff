package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// BenchmarkJournal measures durable sending-and-outcome pairs per second:
// each worker claims 10 operations at a time and, for each, commits the
// sending transition (what must be durable before a request goes out),
// then the outcome, each in its own transaction with its audit entry.
//
// The sqlite3 cases are the baseline: journal_baseline.py does the same
// two commits per pair, on rubicon's own schema, through Python's sqlite3
// module, which is SQLite's C library with no layer in between. Both run
// in WAL mode with synchronous=FULL, in the same directory, one right after
// the other, so that the ratio of the two is taken on the same disk in the
// same minute. cpu-ms/pair is the CPU time of the writing process per pair
// (not PostgreSQL's server).
//
//	make bench-journal    # BENCHCOUNT interleaved runs into bench-journal.out
func BenchmarkJournal(b *testing.B) {
	for _, w := range []int{1, 16} {
		b.Run(fmt.Sprintf("sqlite3-baseline/workers-%d", w), func(b *testing.B) { baseline(b, w) })
		b.Run(fmt.Sprintf("rubicon-sqlite/workers-%d", w), func(b *testing.B) {
			pairs(b, filepath.Join(b.TempDir(), "bench.db"), w)
		})
	}
	for _, w := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("rubicon-postgres/workers-%d", w), func(b *testing.B) {
			dsn := postgresSchema(b)
			pairs(b, dsn, w)
		})
	}
}

// baseline runs journal_baseline.py for b.N pairs and reports what it
// measured.
func baseline(b *testing.B, workers int) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 is not installed")
	}
	db := filepath.Join(b.TempDir(), "baseline.db")
	out, err := exec.Command("python3", "journal_baseline.py", "--db", db, "--pairs", strconv.Itoa(b.N), "--workers", strconv.Itoa(workers)).CombinedOutput()
	if err != nil {
		b.Fatalf("journal_baseline.py: %v\n%s", err, out)
	}
	// pairs N workers W seconds S pairs/s P cpu-seconds C
	f := strings.Fields(string(out))
	if len(f) != 10 {
		b.Fatalf("journal_baseline.py said %q", out)
	}
	secs, err1 := strconv.ParseFloat(f[5], 64)
	cpu, err2 := strconv.ParseFloat(f[9], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("journal_baseline.py said %q", out)
	}
	b.ReportMetric(float64(b.N)/secs, "pairs/s")
	b.ReportMetric(cpu*1000/float64(b.N), "cpu-ms/pair")
	b.ReportMetric(secs*1e9/float64(b.N), "ns/op")
}

// pairs runs the journal's workload on the database dsn names.
func pairs(b *testing.B, dsn string, workers int) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{MaxConns: workers + 2})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	err = db.Update(ctx, func(tx *sqlstore.Tx) error {
		for i := range b.N {
			if _, _, err := j.InsertTx(ctx, tx, journal.NewOperation{Key: fmt.Sprintf("op-%07d", i), Kind: "charge"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, start := processCPU(), time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		name := fmt.Sprintf("w%d", w)
		wg.Go(func() { errs <- work(ctx, j, name) })
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	b.StopTimer()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pairs/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/pair")
}

// work claims operations 10 at a time and takes each through sending to
// applied, until none is left.
func work(ctx context.Context, j *journal.Journal, name string) error {
	for {
		ops, err := j.Claim(ctx, "charge", name, 10)
		if err != nil || len(ops) == 0 {
			return err
		}
		for _, op := range ops {
			if _, err := j.Send(ctx, op.Key, name); err != nil {
				return err
			}
			if _, err := j.Record(ctx, op.Key, journal.Report{Worker: name, To: journal.Applied}); err != nil {
				return err
			}
		}
	}
}

// postgresSchema returns the DSN of a fresh schema on the test server
// (RUBICON_TEST_POSTGRES, "off" to skip), dropped when b ends.
func postgresSchema(b *testing.B) string {
	base := os.Getenv("RUBICON_TEST_POSTGRES")
	if base == "off" {
		b.Skip("PostgreSQL is off")
	}
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	schema := "rubicon_bench_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Skipf("PostgreSQL at %s: %v", base, err)
	}
	b.Cleanup(func() {
		if admin, err := sql.Open("pgx", base); err == nil {
			admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
