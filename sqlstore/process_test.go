package sqlstore_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/ledger"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// workerBinary is the program that the crash and multi-worker tests run
// as child processes, built once, without -race: see package testworker.
func workerBinary(tb testing.TB) string {
	tb.Helper()
	return testkit.Binary(tb, "sqlstore/internal/testworker/cmd/testworker")
}

// workerConfig is what a child worker is told through its environment.
type workerConfig struct {
	DSN, Server, Name string
	// Offset moves the store's clock in the worker, so that a restarted
	// worker finds the leases of a killed one run out without waiting for
	// them.
	Offset time.Duration
	Lease  time.Duration
	// Pause, if set, sleeps up to a millisecond between the steps, so that
	// random kill points fall between every pair of steps.
	Pause bool
	// Mode "hold" runs holder instead of worker.
	Mode string
	// Stderr, if set, receives the worker's standard error; by default the
	// test's.
	Stderr io.Writer
	// Stop, "point:key", stops the worker at a point of key's request:
	// see package testworker.
	Stop string
}

func (c workerConfig) env() []string {
	return append(os.Environ(),
		"RUBICON_WORKER_DSN="+c.DSN, "RUBICON_WORKER_SERVER="+c.Server, "RUBICON_WORKER_NAME="+c.Name,
		"RUBICON_WORKER_OFFSET="+c.Offset.String(), "RUBICON_WORKER_LEASE="+c.Lease.String(),
		"RUBICON_WORKER_PAUSE="+strconv.FormatBool(c.Pause), "RUBICON_WORKER_MODE="+c.Mode, "RUBICON_WORKER_STOP="+c.Stop)
}

// startWorker starts a worker process and waits until it has opened the
// database.
func startWorker(t testing.TB, c workerConfig) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(workerBinary(t))
	cmd.Env = c.env()
	cmd.Stderr = os.Stderr
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("worker %s did not start: %q, %v", c.Name, line, err)
	}
	go io.Copy(io.Discard, out)
	return cmd
}

// runHolder runs a holder process to the end and returns what it printed
// after "ready".
func runHolder(t testing.TB, c workerConfig) (*exec.Cmd, *bufio.Reader, error) {
	cmd := exec.Command(workerBinary(t))
	cmd.Env = c.env()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	return cmd, bufio.NewReader(out), cmd.Start()
}

// queue is a fresh database holding n operations and the budget to pay
// for them, and a server for their requests.
type queue struct {
	dsn  string
	e    *env
	keys []string
	srv  *faultserver.Server
}

func newQueue(t testing.TB, b backend, n int) *queue {
	t.Helper()
	q := &queue{dsn: b.DSN(t)}
	q.e = openDSN(t, q.dsn)
	q.keys = seed(t, q.e, n)
	srv, err := faultserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	q.srv = srv
	return q
}

// seed records n operations and a budget that pays for all of them.
func seed(t testing.TB, e *env, n int) []string {
	t.Helper()
	if _, err := e.l.Open(e.ctx, "budget", "micro-USD", ledger.Amount(10*n)); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("op-%03d", i)
		e.insert(t, keys[i])
	}
	return keys
}

// effects counts, per operation key, the requests that reached the
// server.
func effects(srv *faultserver.Server) map[string]int {
	n := map[string]int{}
	for _, r := range srv.Requests() {
		n[strings.TrimPrefix(r.Path, "/ops/")]++
	}
	return n
}
