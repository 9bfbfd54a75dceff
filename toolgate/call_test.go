package toolgate_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestJournalingFollowsClassAndMode checks that whether a call is
// journaled (and guarded) follows the tool's risk class and retry mode,
// not the MCP read-only hint: a read retried by its method is not
// journaled; a read whose mode says its calls count (a GET that costs
// money, not_sent_only, or opted_in) is, and is judged as a write.
func TestJournalingFollowsClassAndMode(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	status := http.StatusOK
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"orders": []}`)
	}))
	defer up.Close()
	for _, tt := range []struct {
		config    string
		mode      retry.Mode
		journaled bool
		on500     journal.State // what a 500 proves, for a journaled call
	}{
		{"", retry.ByMethod, false, ""},
		{"tools: {listOrders: {retry: not_sent_only}}", retry.NotSentOnly, true, journal.Ambiguous},
		{"tools: {listOrders: {retry: opted_in}}", retry.OptedIn, true, journal.Ambiguous},
	} {
		cat := shop(t, tt.config)
		tool := cat.Callable("listOrders")
		if tool.Annotations.ReadOnly != true || tool.Retry != tt.mode || tool.Journaled() != tt.journaled {
			t.Fatalf("%q: read-only hint %v, mode %v, journaled %v", tt.config, tool.Annotations.ReadOnly, tool.Retry, tool.Journaled())
		}
		c, j := caller(t, cat, up.URL, config.Auth{}, "")
		mu.Lock()
		status = http.StatusOK
		mu.Unlock()
		if res := callTool(t, c, "listOrders", `{}`); res.IsError {
			t.Fatalf("%q: %s", tt.config, res.Text)
		}
		ops, err := j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind})
		if err != nil || (len(ops) == 1) != tt.journaled || len(ops) > 1 {
			t.Fatalf("%q: %d calls journaled (%v), want journaled %v", tt.config, len(ops), err, tt.journaled)
		}
		if !tt.journaled {
			continue
		}
		mu.Lock()
		status = http.StatusInternalServerError
		mu.Unlock()
		res := callTool(t, c, "listOrders", `{"limit": 5}`)
		ops, _ = j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind, States: []journal.State{tt.on500}})
		if !strings.HasPrefix(res.Text, "OUTCOME UNKNOWN") || len(ops) != 1 {
			t.Errorf("%q: a 500 gave %q and %d %s calls", tt.config, res.Text, len(ops), tt.on500)
		}
		// The guard holds the tool back while that call is open.
		if res := callTool(t, c, "listOrders", `{}`); !strings.HasPrefix(res.Text, "REFUSED") {
			t.Errorf("%q: a call after an ambiguous one: %q", tt.config, res.Text)
		}
	}
}

// TestGatewayRecoversCallsLeftInFlight checks that the gateway, while it
// serves, makes a call that a stopped process left in flight ambiguous
// once its lease has run out, and says so.
func TestGatewayRecoversCallsLeftInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "journal.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{Lease: 100 * time.Millisecond})
	// Another process started this call and died before it ended.
	if _, err := j.Start(ctx, journal.NewOperation{Key: "toolgate/createOrder/x", Kind: toolgate.JournalKind, Subject: "s"}, "host:1"); err != nil {
		t.Fatal(err)
	}
	cat := shop(t, "")
	c, err := toolgate.NewCaller(cat, "http://127.0.0.1:1", config.Upstream{}, nil, nil, j)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := toolgate.NewServer(cat, c)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 10)
	g := &toolgate.Gateway{Server: srv, Caller: c, Log: func(line string) { lines <- line }}
	in, keepOpen := io.Pipe()
	defer keepOpen.Close()
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, in, io.Discard) }()
	select {
	case line := <-lines:
		if !strings.Contains(line, "toolgate/createOrder/x was in flight when its process stopped; its outcome is unknown") {
			t.Errorf("the gateway said %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the gateway never recovered the call left in flight")
	}
	if op, err := j.Get(context.Background(), "toolgate/createOrder/x"); err != nil || op.State != journal.Ambiguous {
		t.Errorf("the call left in flight: %s (%v), want ambiguous", op.State, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("the gateway ended with %v", err)
	}
}
