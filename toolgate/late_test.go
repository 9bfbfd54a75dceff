package toolgate_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestAnswerAfterRecoveryIsKept: the journal's store fails (as a database
// that restarts) just as an applied call's answer is to be recorded, for
// longer than the call's lease, and meanwhile another process's recovery
// declares the call ambiguous. The record is tried again, and the answer
// settles the call as applied, with its result; the upstream got one
// request.
func TestAnswerAfterRecoveryIsKept(t *testing.T) {
	t.Parallel()
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			db, err := sqlstore.Open(ctx, b.DSN(t), sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			store := &downStore{Store: db.JournalStore()}
			const lease = 400 * time.Millisecond
			j := journal.New(store, journal.Options{Lease: lease})
			elsewhere := journal.New(db.JournalStore(), journal.Options{})
			var requests atomic.Int32
			recovered := make(chan []journal.Operation, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				store.down.Store(true)
				go func() {
					time.Sleep(lease + 200*time.Millisecond)
					ops, err := elsewhere.Recover(ctx)
					if err != nil {
						t.Error(err)
					}
					recovered <- ops
					store.down.Store(false)
				}()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, `{"id": "o-17", "sku": "A1", "quantity": 2}`)
			}))
			defer up.Close()
			cat := shop(t, "")
			c, err := toolgate.NewCaller(cat, up.URL, config.Upstream{}, nil, nil, j)
			if err != nil {
				t.Fatal(err)
			}
			res := c.Call(ctx, cat.Callable("createOrder"), []byte(`{"body": {"sku": "A1", "quantity": 2}}`), nil)
			if res.IsError || !strings.Contains(res.Text, "o-17") {
				t.Fatalf("the call: %+v", res)
			}
			if ops := <-recovered; len(ops) != 1 {
				t.Fatalf("recovery while the store was down made %d calls ambiguous, want the one", len(ops))
			}
			ops, err := elsewhere.List(ctx, journal.Filter{Kind: toolgate.JournalKind})
			if err != nil || len(ops) != 1 {
				t.Fatalf("calls: %+v, %v", ops, err)
			}
			op := ops[0]
			if op.State != journal.Applied || op.Resolution == nil || !strings.Contains(op.Resolution.Note, "answer arrived after") ||
				!strings.Contains(op.Evidence["answer"].(string), "o-17") {
				t.Fatalf("the call after its answer was recorded late: %s, %+v, evidence %v; want applied, with its result", op.State, op.Resolution, op.Evidence)
			}
			if n := requests.Load(); n != 1 {
				t.Fatalf("the upstream got %d requests", n)
			}
		})
	}
}

// downStore fails every write while down is set, as a store whose server
// restarts.
type downStore struct {
	journal.Store
	down atomic.Bool
}

func (s *downStore) Update(ctx context.Context, fn func(journal.Tx) error) error {
	if s.down.Load() {
		return errors.New("test: the connection to the database server was lost")
	}
	return s.Store.Update(ctx, fn)
}

// TestCallIsSentUnderItsLease: a call's request is bounded by the lease
// its sending commit took, whatever the tool's deadline: a journal whose
// lease is shorter than the deadline ends the call at the lease.
func TestCallIsSentUnderItsLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, t.TempDir()+"/toolgate.db", sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const lease = 300 * time.Millisecond
	j := journal.New(db.JournalStore(), journal.Options{Lease: lease})
	over := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-over:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(over)
	cat := shop(t, "tools: {createOrder: {deadline: 10s}}")
	c, err := toolgate.NewCaller(cat, up.URL, config.Upstream{}, nil, nil, j)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := c.Call(ctx, cat.Callable("createOrder"), []byte(`{"body": {"sku": "A1", "quantity": 2}}`), nil)
	if took := time.Since(start); took > 3*time.Second || !strings.HasPrefix(res.Text, "OUTCOME UNKNOWN") {
		t.Fatalf("a call past its lease of %s: %s after %s; want it ended at the lease, its outcome unknown", lease, res.Text, took)
	}
}
