package sqlstore_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// soakEnv sets the number of crash runs per backend (make soak).
const soakEnv = "RUBICON_SOAK_RUNS"

// TestCrashLeavesOnlyAmbiguity kills a worker process with SIGKILL at a
// random point, then checks what a restart finds: no operation lost, none
// sent twice, every operation that may have been sent ambiguous with its
// hold still held, and a ledger that balances. A second worker then
// finishes the queue without sending anything again.
func TestCrashLeavesOnlyAmbiguity(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	runs := map[string]int{"sqlite": 50, "postgres": 20}
	if v, err := strconv.Atoi(os.Getenv(soakEnv)); err == nil && v > 0 {
		runs = map[string]int{"sqlite": v, "postgres": v}
	}
	forEach(t, func(t *testing.T, b backend) {
		seed := uint64(time.Now().UnixNano())
		rng := rand.New(rand.NewPCG(seed, 7))
		t.Logf("seed %d, %d runs", seed, runs[b.Name])
		var ambiguous, applied int
		for run := range runs[b.Name] {
			a, p := crashRun(t, b, rng.IntN(40_000), run)
			ambiguous += a
			applied += p
			if t.Failed() {
				t.Fatalf("run %d (seed %d) failed", run, seed)
			}
		}
		t.Logf("after the kills: %d operations applied, %d ambiguous", applied, ambiguous)
		if ambiguous == 0 {
			t.Errorf("no kill landed between sending and recording in %d runs: the test did not test recovery", runs[b.Name])
		}
	})
}

// crashRun plays one kill after killAfter microseconds and returns how many
// operations were ambiguous and applied after the kill.
func crashRun(t *testing.T, b backend, killAfter, run int) (ambiguous, applied int) {
	const n = 8
	q := newQueue(t, b, n)
	dsn, e, keys, srv := q.dsn, q.e, q.keys, q.srv
	defer e.db.Close() // now, not at the end of all runs: PostgreSQL counts connections
	defer srv.Close()
	srv.SetDefault(faultserver.Step{Status: 200, Delay: time.Millisecond})

	cfg := workerConfig{DSN: dsn, Server: srv.URL(), Name: "victim", Lease: 2 * time.Second, Pause: true}
	victim := fmt.Sprintf("rubicon_victim_%d_%d", os.Getpid(), run)
	if b.Name == "postgres" {
		cfg.DSN = dsn + "&application_name=" + victim
	}
	cmd := startWorker(t, cfg)
	time.Sleep(time.Duration(killAfter) * time.Microsecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if b.Name == "postgres" {
		// A COMMIT the victim sent just before it died may still be on its
		// way through its server process: the restart comes after that
		// process is gone, as a recovery run later would.
		waitGone(t, dsn, victim)
	}

	// The restart: every lease of the dead worker has run out.
	e.clock.Set(time.Now().Add(time.Hour))
	if _, err := e.j.Recover(e.ctx); err != nil {
		t.Fatal(err)
	}
	check := func(stage string) {
		sent := effects(srv)
		ops, err := e.j.List(e.ctx, journal.Filter{Kind: "charge"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ops) != n {
			t.Errorf("run %d %s: %d operations, want %d: some were lost", run, stage, len(ops), n)
		}
		for _, op := range ops {
			h, holdErr := holdOf(e, ledger.AttemptHoldID(op.Key, max(op.Attempts, 1)))
			switch {
			case sent[op.Key] > 1:
				t.Errorf("run %d %s: %s was sent %d times", run, stage, op.Key, sent[op.Key])
			case op.State == journal.Sending:
				t.Errorf("run %d %s: %s still sending after recovery", run, stage, op.Key)
			case op.State == journal.Applied && (sent[op.Key] != 1 || h.State != ledger.Settled):
				t.Errorf("run %d %s: %s applied with %d effects and hold %+v", run, stage, op.Key, sent[op.Key], h)
			case op.State == journal.Ambiguous && (holdErr != nil || h.State != ledger.Held):
				t.Errorf("run %d %s: ambiguous %s without a held hold: %+v %v", run, stage, op.Key, h, holdErr)
			case op.State == journal.Pending && (sent[op.Key] != 0 || holdErr == nil):
				t.Errorf("run %d %s: pending %s has %d effects, hold %+v", run, stage, op.Key, sent[op.Key], h)
			}
		}
		if bad, err := e.l.Verify(e.ctx); err != nil || len(bad) != 0 {
			t.Errorf("run %d %s: the ledger does not balance: %+v %v", run, stage, bad, err)
		}
	}
	check("after the kill")
	for _, k := range keys {
		op, _ := e.j.Get(e.ctx, k)
		switch op.State {
		case journal.Ambiguous:
			ambiguous++
		case journal.Applied:
			applied++
		}
	}

	// A new worker finishes the queue; it must not send any ambiguous
	// operation again.
	cfg.Name, cfg.Offset, cfg.Pause = "successor", time.Hour, false
	cmd = startWorker(t, cfg)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run %d: successor worker: %v", run, err)
	}
	check("after the successor")
	for _, k := range keys {
		op, _ := e.j.Get(e.ctx, k)
		if op.State != journal.Applied && op.State != journal.Ambiguous {
			t.Errorf("run %d: %s left %s by the successor", run, k, op.State)
		}
	}
	return ambiguous, applied
}

func holdOf(e *env, id string) (ledger.Hold, error) {
	var h ledger.Hold
	err := e.db.View(e.ctx, func(tx *sqlstore.Tx) error {
		var err error
		h, err = tx.LockHold(e.ctx, id)
		return err
	})
	return h, err
}

// waitGone waits until no PostgreSQL server process serves a connection
// named app.
func waitGone(t *testing.T, dsn, app string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed worker's PostgreSQL connections (%s) are still open after 30 s", app)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
