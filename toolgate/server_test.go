package toolgate_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/transport"
)

// session connects the official Go SDK's client, in process, to a toolgate
// server for the shop document and upstream.
func session(t testing.TB, mode config.Mode, upstream, configYAML string) (*gate, *journal.Journal) {
	t.Helper()
	cat := shop(t, configYAML)
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "toolgate.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	j := journal.New(db.JournalStore(), journal.Options{})
	cfg := retry.DefaultConfig()
	cfg.BaseDelay, cfg.MaxDelay = 5*time.Millisecond, 20*time.Millisecond
	client, _ := transport.NewClient(transport.Options{Policy: retry.MustNew(cfg)})
	caller, err := toolgate.NewCaller(cat, upstream, config.Upstream{}, func(string) string { return "" }, client, j)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, mode, cat, caller)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gate{cs, mode}, j
}

func call(t *testing.T, g *gate, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := g.CallTool(context.Background(), g.params(name, args))
	if err != nil {
		return nil, err.Error()
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res, text.String()
}

func TestToolsOverMCP(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		api := shopapi.New()
		up := httptest.NewServer(api)
		defer up.Close()
		cs, _ := session(t, mode, up.URL, "")

		names := cs.tools(t)
		if len(names) != 4 || names["createOrder"] == nil || names["deleteOrder"] != nil || names["listApiKeys"] != nil {
			t.Fatalf("listed %v; want the 4 read and write tools only", names)
		}
		a := names["listOrders"].Annotations
		if !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint == nil || !*a.OpenWorldHint {
			t.Fatalf("listOrders annotations %+v", a)
		}
		if a := names["createOrder"].Annotations; a.ReadOnlyHint || a.IdempotentHint {
			t.Fatalf("createOrder annotations %+v", a)
		}

		res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 2}})
		if res == nil || res.IsError || !strings.Contains(text, `"sku":"A1"`) {
			t.Fatalf("createOrder: %s", text)
		}
		var order struct{ ID string }
		json.Unmarshal([]byte(text), &order)
		res, text = call(t, cs, "getOrder", map[string]any{"id": order.ID})
		if res == nil || res.IsError || !strings.Contains(text, order.ID) {
			t.Fatalf("getOrder: %s", text)
		}
		// Arguments are checked before anything is sent.
		for _, bad := range []map[string]any{
			{"body": map[string]any{"sku": "A1"}},
			{"body": map[string]any{"sku": "A1", "quantity": "two"}},
			{"body": map[string]any{"sku": "A1", "quantity": 1}, "host": "evil.example"},
		} {
			res, text = call(t, cs, "createOrder", bad)
			if res == nil || !res.IsError || !strings.Contains(text, "Nothing was sent") {
				t.Errorf("createOrder(%v): %s", bad, text)
			}
		}
		if api.Effects() != 1 {
			t.Fatalf("the upstream saw %d changes, want 1", api.Effects())
		}
		// A path argument cannot leave its segment.
		res, text = call(t, cs, "getOrder", map[string]any{"id": "../admin/api-keys"})
		if res == nil || !res.IsError || strings.Contains(text, "k-1") {
			t.Fatalf("path traversal reached another endpoint: %s", text)
		}
		// Hidden tools are refused by name too.
		if res, text := call(t, cs, "deleteOrder", map[string]any{"id": order.ID}); res != nil && !res.IsError {
			t.Fatalf("a hidden tool was called: %s", text)
		}
		if api.Effects() != 1 {
			t.Fatalf("a hidden tool reached the upstream")
		}
	})
}

// TestAmbiguousCallsAreToldAndNotRepeated: a POST tool whose upstream
// answers 502, or resets after reading, is not retried, says the outcome
// is unknown and how to check, and an identical call is then refused.
func TestAmbiguousCallsAreToldAndNotRepeated(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		for _, fault := range []faultserver.Step{faultserver.Status(502), faultserver.Do(faultserver.ResetAfterRead)} {
			t.Run(fault.String(), func(t *testing.T) {
				srv, err := faultserver.Start(fault)
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				cs, j := session(t, mode, srv.URL(), "")
				args := map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}}
				res, text := call(t, cs, "createOrder", args)
				if res == nil || !res.IsError || !strings.Contains(text, "OUTCOME UNKNOWN") || !strings.Contains(text, "Do not call this tool again") {
					t.Fatalf("result: %s", text)
				}
				if !strings.Contains(text, "listOrders") {
					t.Errorf("the result does not say how to check: %s", text)
				}
				res, text = call(t, cs, "createOrder", args)
				if res == nil || !res.IsError || !strings.Contains(text, "REFUSED") {
					t.Fatalf("an identical call: %s", text)
				}
				if srv.Effects() != 1 {
					t.Fatalf("effects %d, want 1", srv.Effects())
				}
				ops, _ := j.List(context.Background(), journal.Filter{Kind: "toolgate", States: []journal.State{journal.Ambiguous}})
				if len(ops) != 1 {
					t.Fatalf("journal: %d ambiguous operations, want 1", len(ops))
				}
				// The same call with an extra optional field, or other
				// arguments, acts on the same resource: refused too.
				for _, other := range []map[string]any{
					{"body": map[string]any{"sku": "A1", "quantity": 1, "note": "second try"}},
					{"body": map[string]any{"sku": "B2", "quantity": 1}},
				} {
					res, text = call(t, cs, "createOrder", other)
					if res == nil || !res.IsError || !strings.Contains(text, "REFUSED") || !strings.Contains(text, "same resource") {
						t.Fatalf("createOrder(%v) after an ambiguous one: %s", other, text)
					}
				}
				if srv.Effects() != 1 {
					t.Fatalf("effects %d, want 1", srv.Effects())
				}
			})
		}
	})
}

// TestGuardIsPerResource: an ambiguous call holds back the calls of its
// tool on the same path parameters only; a tool configured with the
// identical guard holds back only identical calls.
func TestGuardIsPerResource(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		srv, err := faultserver.Start(faultserver.Status(502), faultserver.Status(200), faultserver.Status(502), faultserver.Status(200))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		// Three refunds in a row pass refundOrder's rate limit only when it
		// is lifted: the guard is what is tested here.
		cs, _ := session(t, mode, srv.URL(), "tools:\n  refundOrder:\n    expose: true\n    rate_limit: none\n  createOrder:\n    guard: identical\n")
		refund := func(id, reason string) string {
			_, text := call(t, cs, "refundOrder", map[string]any{"id": id, "X-Reason": reason})
			return text
		}
		if text := refund("o1", "damaged"); !strings.Contains(text, "OUTCOME UNKNOWN") {
			t.Fatalf("first refund: %s", text)
		}
		if text := refund("o1", "late"); !strings.Contains(text, "REFUSED") || !strings.Contains(text, "id=o1") {
			t.Fatalf("refund of the same order with another reason: %s", text)
		}
		if text := refund("o2", "damaged"); strings.Contains(text, "REFUSED") {
			t.Fatalf("refund of another order: %s", text)
		}
		// createOrder's guard is identical: other arguments go through.
		args := map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}}
		if _, text := call(t, cs, "createOrder", args); !strings.Contains(text, "OUTCOME UNKNOWN") {
			t.Fatalf("first order: %s", text)
		}
		if _, text := call(t, cs, "createOrder", args); !strings.Contains(text, "REFUSED") || !strings.Contains(text, "same arguments") {
			t.Fatalf("identical order: %s", text)
		}
		if res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "B2", "quantity": 1}}); res == nil || res.IsError {
			t.Fatalf("another order under the identical guard: %s", text)
		}
		if n := srv.Effects(); n != 4 {
			t.Fatalf("the upstream saw %d requests, want 4", n)
		}
	})
}

func TestReadToolsAreRetried(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(503))
		defer srv.Close()
		cs, _ := session(t, mode, srv.URL(), "")
		res, text := call(t, cs, "listOrders", nil)
		if res == nil || res.IsError || srv.Effects() != 3 {
			t.Fatalf("listOrders after a reset and a 503: %s, %d requests", text, srv.Effects())
		}
	})
}

// A GET that the document marks as a write (x-risk) is treated as one: it
// is not retried once sent, and a failure after the write is ambiguous.
func TestGETThatWritesIsNotRetried(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(200))
		defer srv.Close()
		cs, j := session(t, mode, srv.URL(), "")
		res, text := call(t, cs, "getCategory", map[string]any{"id": 7})
		if res == nil || !res.IsError || !strings.Contains(text, "OUTCOME UNKNOWN") || srv.Effects() != 1 {
			t.Fatalf("getCategory after a reset: %s, %d requests", text, srv.Effects())
		}
		if ops, _ := j.List(context.Background(), journal.Filter{Kind: "toolgate", States: []journal.State{journal.Ambiguous}}); len(ops) != 1 {
			t.Fatalf("journal: %d ambiguous operations, want 1", len(ops))
		}
	})
}

func TestOptedInToolRetriesWithOneKey(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		srv, _ := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(502))
		defer srv.Close()
		cs, _ := session(t, mode, srv.URL(), "tools:\n  createOrder:\n    retry: opted_in\n")
		res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}})
		if res == nil || res.IsError {
			t.Fatalf("opted-in createOrder: %s", text)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d attempts, want 3", len(reqs))
		}
		key := reqs[0].Header.Get("Idempotency-Key")
		for _, r := range reqs {
			if key == "" || r.Header.Get("Idempotency-Key") != key {
				t.Fatalf("attempts carried keys %q and %q", key, r.Header.Get("Idempotency-Key"))
			}
		}
	})
}

func TestEveryCallEndsWithinItsDeadline(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		srv, _ := faultserver.Start(faultserver.Do(faultserver.Hang), faultserver.Do(faultserver.Hang), faultserver.Do(faultserver.Hang))
		defer srv.Close()
		cs, _ := session(t, mode, srv.URL(), "defaults:\n  deadline: 300ms\n")
		for tool, args := range map[string]map[string]any{"listOrders": nil, "createOrder": {"body": map[string]any{"sku": "A1", "quantity": 1}}} {
			start := time.Now()
			res, text := call(t, cs, tool, args)
			if took := time.Since(start); took > 300*time.Millisecond+250*time.Millisecond {
				t.Errorf("%s took %s with a 300 ms deadline", tool, took)
			}
			if res == nil || !res.IsError {
				t.Errorf("%s against a hanging upstream: %s", tool, text)
			}
		}
	})
}

func TestInvalidArgumentsNameTheArgument(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		api := shopapi.New()
		up := httptest.NewServer(api)
		defer up.Close()
		cs, _ := session(t, mode, up.URL, "")
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"listOrders", map[string]any{"limit": 999}, "listOrders's input schema: limit is 999; it must be at most 100. Nothing was sent."},
			{"createOrder", map[string]any{"body": map[string]any{"sku": "A1"}}, "body.quantity is missing; it is required. Nothing was sent."},
			{"createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 0}}, "body.quantity is 0; it must be at least 1. Nothing was sent."},
		} {
			res, text := call(t, cs, c.tool, c.args)
			if res == nil || !res.IsError || !strings.HasSuffix(text, c.want) {
				t.Errorf("%s %v: %q, want it to end %q", c.tool, c.args, text, c.want)
			}
		}
		if n := api.Effects(); n != 0 {
			t.Errorf("invalid calls changed the API %d times", n)
		}
	})
}

// TestAppliedWriteIsNeverReportedAsAFailure: an answer that does not match
// the document's response schema, or is too large to be structured, still
// reaches the agent as the applied result it is, and no tool declares an
// output schema that a client would hold the answer to.
func TestAppliedWriteIsNeverReportedAsAFailure(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		for name, answer := range map[string]string{
			"not the documented shape": `{"order_id": 42, "sku": ["not", "a", "string"]}`,
			"too large":                `{"id": "o1", "padding": "` + strings.Repeat("x", 200<<10) + `"}`,
		} {
			t.Run(name, func(t *testing.T) {
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusCreated)
					io.WriteString(w, answer)
				}))
				defer up.Close()
				cs, j := session(t, mode, up.URL, "")
				for _, tl := range cs.tools(t) {
					if tl.OutputSchema != nil {
						t.Errorf("%s declares an output schema", tl.Name)
					}
				}
				res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}})
				if res == nil || res.IsError {
					t.Fatalf("an applied write came back as a failure: %.200s", text)
				}
				ops, _ := j.List(context.Background(), journal.Filter{Kind: "toolgate", States: []journal.State{journal.Applied}})
				if len(ops) != 1 {
					t.Fatalf("journal: %d applied calls, want 1", len(ops))
				}
			})
		}
	})
}

// TestRefusalWithALongWaitIsARefusal: a 429 that asks for a wait longer
// than the call's deadline is still a refusal, whether or not the tool is
// opted in to retries, never an unknown outcome: an answer came back, and
// Retry-After changes when a retry may happen, not what the answer proved.
func TestRefusalWithALongWaitIsARefusal(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		for name, cfg := range map[string]string{"by method": "", "opted in": "tools:\n  createOrder:\n    retry: opted_in\n"} {
			t.Run(name, func(t *testing.T) {
				srv, err := faultserver.Start(faultserver.RetryAfter(http.StatusTooManyRequests, 120*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				cs, j := session(t, mode, srv.URL(), cfg)
				res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}})
				if res == nil || !res.IsError || !strings.Contains(text, "refused") || strings.Contains(text, "OUTCOME UNKNOWN") {
					t.Fatalf("a 429 with Retry-After: 120: %s", text)
				}
				if srv.Effects() != 1 {
					t.Fatalf("%d requests, want 1", srv.Effects())
				}
				ops, _ := j.List(context.Background(), journal.Filter{Kind: "toolgate"})
				if len(ops) != 1 || ops[0].State != journal.NotApplied {
					t.Fatalf("journal: %+v, want one not_applied call", ops)
				}
			})
		}
	})
}
