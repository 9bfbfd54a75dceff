// Package testworker is the worker process of sqlstore's crash and
// multi-process tests. Its behaviour is set through the environment; see
// sqlstore's process_test.go. It is built without the race detector, since
// each worker is a sequential program and the race-instrumented SQLite is
// ten times slower.
package testworker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/transport"
)

// Main runs the worker the environment asks for and returns the exit code.
func Main() int {
	run := worker
	switch os.Getenv("RUBICON_WORKER_MODE") {
	case "hold":
		run = holder
	case "lock":
		run = locker
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// worker claims "charge" operations until none is left. For each: hold the
// budget and commit sending in one transaction, POST to the server under
// the sending commit's fence, then record the outcome and settle or void
// the hold in one transaction.
//
// RUBICON_WORKER_STOP, "point:key", stops the worker (SIGSTOP, as a
// freeze or a long pause would) at a point of the operation key's
// request: "sent" after its sending commit, "connected" when its
// connection is ready and before the request's first byte, "answered"
// after its answer and before it is recorded. The test continues it.
func worker() error {
	offset, _ := time.ParseDuration(os.Getenv("RUBICON_WORKER_OFFSET"))
	lease, _ := time.ParseDuration(os.Getenv("RUBICON_WORKER_LEASE"))
	pause := os.Getenv("RUBICON_WORKER_PAUSE") == "true"
	name, server := os.Getenv("RUBICON_WORKER_NAME"), os.Getenv("RUBICON_WORKER_SERVER")
	ctx := context.Background()
	stopPoint, stopKey, _ := strings.Cut(os.Getenv("RUBICON_WORKER_STOP"), ":")
	continued := make(chan os.Signal, 1)
	signal.Notify(continued, syscall.SIGCONT)
	stop := func(point, key string) {
		if point == stopPoint && key == stopKey {
			// The stop reaches the process a moment later; this goroutine
			// goes on only once it is continued.
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			<-continued
		}
	}
	opts := sqlstore.Options{BusyTimeout: 30 * time.Second}
	now := func() time.Time { return time.Now().Add(offset) }
	if offset != 0 {
		// A restarted worker finds the leases of a killed one run out.
		opts.Clock = now
	}
	db, err := sqlstore.Open(ctx, os.Getenv("RUBICON_WORKER_DSN"), opts)
	if err != nil {
		return err
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{Lease: lease})
	l := ledger.New(db.LedgerStore(), now)
	client, err := transport.NewClient(transport.Options{})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	step := func() {
		if pause {
			time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
		}
	}
	for {
		ops, err := j.Claim(ctx, "charge", name, 4)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			return nil
		}
		for _, op := range ops {
			step()
			var sent journal.Operation
			err := db.Update(ctx, func(tx *sqlstore.Tx) error {
				var err error
				if sent, err = j.SendTx(ctx, tx, op.Key, name); err != nil {
					return err
				}
				_, err = l.HoldTx(ctx, tx, ledger.HoldRequest{ID: ledger.AttemptHoldID(op.Key, sent.Attempts), Account: "budget", Amount: 10, Operation: op.Key})
				return err
			})
			if err != nil {
				return fmt.Errorf("hold and send %s: %w", op.Key, err)
			}
			step()
			stop("sent", op.Key)
			fenced, cancel := sent.Fence(ctx)
			fenced = httptrace.WithClientTrace(fenced, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { stop("connected", op.Key) }})
			req, _ := http.NewRequestWithContext(fenced, http.MethodPost, server+"/ops/"+op.Key, strings.NewReader(`{"amount":10}`))
			req.Header.Set("Content-Type", "application/json")
			resp, callErr := client.Do(req)
			if callErr == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			cancel()
			step()
			stop("answered", op.Key)
			rep := journal.ReportCall(name, resp, callErr)
			err = db.Update(ctx, func(tx *sqlstore.Tx) error {
				if _, err := j.RecordTx(ctx, tx, op.Key, rep); err != nil {
					return err
				}
				hold := ledger.AttemptHoldID(op.Key, sent.Attempts)
				switch rep.To {
				case journal.Applied:
					_, err = l.SettleTx(ctx, tx, hold, 9)
				case journal.NotApplied, journal.FailedSafe:
					_, err = l.VoidTx(ctx, tx, hold)
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("record %s: %w", op.Key, err)
			}
		}
	}
}

// holder tries 50 holds of 7 on the account "shared" and prints how many it
// was granted.
func holder() error {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, os.Getenv("RUBICON_WORKER_DSN"), sqlstore.Options{BusyTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	l := ledger.New(db.LedgerStore(), nil)
	fmt.Println("ready")
	granted := 0
	for i := range 50 {
		_, err := l.Hold(ctx, ledger.HoldRequest{ID: fmt.Sprintf("%s-%d", os.Getenv("RUBICON_WORKER_NAME"), i), Account: "shared", Amount: 7})
		switch {
		case err == nil:
			granted++
		case !errors.Is(err, ledger.ErrInsufficientFunds):
			return err
		}
	}
	fmt.Println(granted)
	return nil
}

// locker takes the database's write lock, says "ready", and keeps it
// until it is killed.
func locker() error {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, os.Getenv("RUBICON_WORKER_DSN"), sqlstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	locked := make(chan struct{})
	go db.Update(ctx, func(tx *sqlstore.Tx) error {
		if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO rubicon_accounts (name, limit_amount) VALUES ('locker', 0)`); err != nil {
			return err
		}
		close(locked)
		select {} // holds the transaction, and the lock
	})
	<-locked
	fmt.Println("ready")
	select {}
}
