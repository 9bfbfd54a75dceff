package toolgate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestMetricsAndLogs makes calls of each outcome against the example API,
// through a real socket, and reads what the metrics and the log say.
func TestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	api := shopapi.New()
	var failedOnce, hung atomic.Bool
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "GET" && r.URL.Path == "/orders/flaky" && !failedOnce.Swap(true):
			w.WriteHeader(http.StatusServiceUnavailable) // a read is tried again
			return
		case r.Method == "GET" && r.URL.Path == "/orders/slow":
			hung.Store(true)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/refund"):
			w.Header().Set("X-Request-Id", "req_7f3a")
			w.WriteHeader(http.StatusBadGateway) // the refund may have gone through
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer up.Close()
	cat := shop(t, "tools:\n  getOrder: {deadline: 300ms}\n  refundOrder: {expose: true}\n")
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	caller, err := toolgate.NewCaller(cat, up.URL, config.Upstream{}, nil, nil, j)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := toolgate.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	caller.Instrument(m, slog.New(slog.NewJSONHandler(&logs, nil)))

	ctx := context.Background()
	callTool := func(name, args string) toolgate.Result {
		return caller.Call(ctx, cat.Callable(name), json.RawMessage(args), nil)
	}
	callTool("createOrder", `{"body":{"sku":"A1","quantity":1}}`) // applied
	callTool("createOrder", `{"body":{"sku":"A1","quantity":0}}`) // invalid
	api.LoseAnswers(1)
	callTool("createOrder", `{"body":{"sku":"B7","quantity":1}}`) // ambiguous
	callTool("createOrder", `{"body":{"sku":"B7","quantity":1}}`) // refused by the guard
	if r := callTool("getOrder", `{"id":"flaky"}`); !strings.Contains(r.Text, "no such order") {
		t.Fatalf("the flaky read, tried again: %+v", r)
	}
	callTool("getOrder", `{"id":"slow"}`) // out of time
	if !hung.Load() {
		t.Fatal("the slow read did not reach the upstream")
	}
	refund := callTool("refundOrder", `{"id":"o1"}`) // ambiguous, with the upstream's id of the request
	if !refund.IsError || !strings.Contains(refund.Text, "OUTCOME UNKNOWN") {
		t.Fatalf("the refund: %+v", refund)
	}

	want := `
# HELP toolgate_calls_total Tool calls, by tool, risk class and outcome: applied, not_applied, ambiguous or failed_safe once sent or tried; refused (the guard held it back, or a person did not accept it), replayed (an identical call was applied, its answer given again), invalid or not_recorded when nothing was sent.
# TYPE toolgate_calls_total counter
toolgate_calls_total{class="destructive",outcome="ambiguous",tool="refundOrder"} 1
toolgate_calls_total{class="read",outcome="applied",tool="getOrder"} 0
toolgate_calls_total{class="read",outcome="not_applied",tool="getOrder"} 1
toolgate_calls_total{class="write",outcome="ambiguous",tool="createOrder"} 1
toolgate_calls_total{class="write",outcome="applied",tool="createOrder"} 1
toolgate_calls_total{class="write",outcome="invalid",tool="createOrder"} 1
toolgate_calls_total{class="write",outcome="refused",tool="createOrder"} 1
# HELP toolgate_deadline_exhausted_total Tool calls that ran out of their deadline before an answer, by tool.
# TYPE toolgate_deadline_exhausted_total counter
toolgate_deadline_exhausted_total{tool="getOrder"} 1
# HELP toolgate_retries_total Attempts of tool calls made again by the transport, each proven safe to repeat, by tool.
# TYPE toolgate_retries_total counter
toolgate_retries_total{tool="getOrder"} 1
`
	// The slow read's outcome is whatever the transport proved of it; the
	// rest is exact.
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	slowOutcome := ""
	for _, mf := range got {
		for _, metric := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if mf.GetName() == "toolgate_calls_total" && labels["tool"] == "getOrder" && labels["outcome"] != "not_applied" {
				slowOutcome = labels["outcome"]
			}
		}
	}
	want = strings.Replace(want, `outcome="applied",tool="getOrder"} 0`, `outcome="`+slowOutcome+`",tool="getOrder"} 1`, 1)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", l)
		}
		lines = append(lines, m)
	}
	if len(lines) != 7 {
		t.Fatalf("%d log lines; want one per call:\n%s", len(lines), logs.String())
	}
	amb := lines[2]
	if amb["msg"] != "call" || amb["level"] != "WARN" || amb["tool"] != "createOrder" || amb["outcome"] != "ambiguous" ||
		!strings.HasPrefix(amb["key"].(string), "toolgate/createOrder/") {
		t.Errorf("the ambiguous call's line: %v", amb)
	}
	if strings.Contains(logs.String(), "B7") {
		t.Errorf("the log holds a call's arguments:\n%s", logs.String())
	}

	// The refund's evidence names the request the upstream answered.
	ops, err := j.List(ctx, journal.Filter{Kind: toolgate.JournalKind, States: []journal.State{journal.Ambiguous}})
	if err != nil || len(ops) != 2 {
		t.Fatalf("ambiguous calls: %d, %v", len(ops), err)
	}
	for _, op := range ops {
		if op.Evidence["tool"] == "refundOrder" && op.Evidence["provider_request_id"] != "req_7f3a" {
			t.Errorf("the refund's evidence: %v", op.Evidence)
		}
	}
}
