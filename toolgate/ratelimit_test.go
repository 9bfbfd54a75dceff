package toolgate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// notesAPI has reads, writes and a destructive tool, all tagged notes.
const notesAPI = `openapi: 3.0.3
info: {title: Notes, version: "1"}
paths:
  /notes:
    get: {operationId: listNotes, tags: [notes], responses: {"200": {description: ok}}}
    post: {operationId: createNote, tags: [notes], responses: {"201": {description: created}}}
  /notes/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    put: {operationId: updateNote, tags: [notes], responses: {"200": {description: ok}}}
    delete: {operationId: deleteNote, tags: [notes], responses: {"204": {description: deleted}}}
`

// limited is the shape of every refusal for a rate limit, toolgate's own
// and the upstream's: why, what was not done, and when to try again.
var limited = regexp.MustCompile(`^RATE LIMITED: .+\. Nothing was (sent|applied)\. Try again in (\d+) s\.$`)

// wait returns the seconds a refusal for a rate limit asks to wait, or
// fails.
func wait(t *testing.T, res toolgate.Result) int {
	t.Helper()
	m := limited.FindStringSubmatch(res.Text)
	if !res.IsError || m == nil {
		t.Fatalf("not refused for a rate limit: %q", res.Text)
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// The built-in limit of a write (10 a minute, 5 at once) refuses the
// sixth call in a row, saying when to try again; reads are not limited; a
// person is not asked about a call the limit refuses.
func TestRateLimitRefusesWithTheWait(t *testing.T) {
	up := newRecorder(t, nil)
	// Identical calls, none answered from an earlier one: each meets the
	// limit.
	c, _ := caller(t, catalog(t, notesAPI, "defaults: {replay: 0}\ntools: {deleteNote: {expose: confirm, rate_limit: {per_minute: 1}}}"), up.URL, config.Auth{}, "")
	for i := range 5 {
		if res := callTool(t, c, "createNote", `{}`); res.IsError {
			t.Fatalf("call %d: %s", i+1, res.Text)
		}
	}
	res := callTool(t, c, "createNote", `{}`)
	if w := wait(t, res); w < 5 || w > 6 || !strings.Contains(res.Text, "createNote is limited to 10 a minute, 5 at once (defaults.rate_limit.write)") {
		t.Errorf("the sixth call: %q", res.Text)
	}
	if n := len(up.requests()); n != 5 {
		t.Errorf("the upstream received %d calls, want 5", n)
	}
	for range 30 {
		if res := callTool(t, c, "listNotes", `{}`); res.IsError {
			t.Fatalf("a read: %s", res.Text)
		}
	}

	p := &asker{}
	del := c.cat.Callable("deleteNote")
	if res := c.Call(context.Background(), del, json.RawMessage(`{"id":"n1"}`), p); res.IsError {
		t.Fatal(res.Text)
	}
	res = c.Call(context.Background(), del, json.RawMessage(`{"id":"n2"}`), p)
	if w := wait(t, res); w < 59 || w > 60 || len(p.asked) != 1 {
		t.Errorf("the second delete: %q; the person was asked %d times", res.Text, len(p.asked))
	}
}

// A tag's limit is one bucket its tools share; a tool's own rule lifts it
// for that tool.
func TestRateLimitOfATag(t *testing.T) {
	up := newRecorder(t, nil)
	c, _ := caller(t, catalog(t, notesAPI, "tags: {notes: {rate_limit: {per_minute: 2}}}\ntools: {listNotes: {rate_limit: none}}"), up.URL, config.Auth{}, "")
	if res := callTool(t, c, "createNote", `{}`); res.IsError {
		t.Fatal(res.Text)
	}
	res := callTool(t, c, "updateNote", `{"id":"n1"}`)
	if w := wait(t, res); w < 29 || w > 30 || !strings.Contains(res.Text, "updateNote is limited to 2 a minute, 1 at once (tags.notes.rate_limit), and the calls of its tag's tools together have used that up") {
		t.Errorf("another tool of the tag: %q", res.Text)
	}
	for range 10 {
		if res := callTool(t, c, "listNotes", `{}`); res.IsError {
			t.Fatalf("a tool whose own rule lifts the limit: %s", res.Text)
		}
	}
	if n := len(up.requests()); n != 11 {
		t.Errorf("the upstream received %d calls, want 11", n)
	}
}

// The upstream's 429 and its Retry-After are told in the shape of
// toolgate's own limit: for a write, which is never sent again, and for a
// read whose wait is longer than its deadline.
func TestUpstreamTooManyRequests(t *testing.T) {
	retryAfter := "30"
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":"slow down"}`))
	})
	c, _ := caller(t, catalog(t, notesAPI, ""), up.URL, config.Auth{}, "")
	res := callTool(t, c, "createNote", `{}`)
	if w := wait(t, res); w != 30 || !strings.HasPrefix(res.Text, `RATE LIMITED: the upstream API refused the call: 429 Too Many Requests: {"error":"slow down"}. Nothing was applied.`) {
		t.Errorf("a write answered 429: %q", res.Text)
	}
	retryAfter = "120"
	res = callTool(t, c, "listNotes", `{}`)
	if w := wait(t, res); w != 120 || !strings.HasPrefix(res.Text, `RATE LIMITED: the upstream API refused the call: 429 Too Many Requests: {"error":"slow down"}. Nothing was applied.`) {
		t.Errorf("a read answered 429 with a wait past its deadline: %q", res.Text)
	}
	if n := len(up.requests()); n != 2 {
		t.Errorf("the upstream received %d calls, want 2: neither is repeated", n)
	}
	retryAfter = ""
	res = callTool(t, c, "updateNote", `{"id":"n1"}`)
	if !res.IsError || !strings.HasPrefix(res.Text, "RATE LIMITED: the upstream API refused the call: 429 Too Many Requests") || !strings.HasSuffix(res.Text, "Try again later: it did not say when.") {
		t.Errorf("429 without Retry-After: %q", res.Text)
	}
}

// inspect and describe_operation say how often each tool may be called,
// and by which setting.
func TestRateLimitIsDescribed(t *testing.T) {
	cfg := "tags: {payments: {rate_limit: {per_minute: 2}}}\ntools: {createOrder: {rate_limit: {per_minute: 30, burst: 10}}}"
	rows, _, err := shop(t, cfg).Inspect()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"createOrder": "30 a minute, 10 at once (tools.createOrder.rate_limit)",
		"refundOrder": "2 a minute, 1 at once (tags.payments.rate_limit)",
		"deleteOrder": "3 a minute, 2 at once (defaults.rate_limit.destructive)",
		"listOrders":  "unlimited (defaults.rate_limit.read)",
	}
	for _, r := range rows {
		if w, ok := want[r.Name]; ok && r.RateLimit != w {
			t.Errorf("inspect: %s's rate limit is %q, want %q", r.Name, r.RateLimit, w)
		}
	}
	g, _ := session(t, config.ModeSearch, "http://127.0.0.1:1", cfg)
	res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: toolgate.DescribeTool, Arguments: map[string]any{"name": "createOrder"}})
	if err != nil || res.IsError {
		t.Fatalf("describe_operation: %v %+v", err, res)
	}
	var d struct {
		RateLimit string `json:"rate_limit"`
	}
	if err := json.Unmarshal([]byte(text(res)), &d); err != nil || d.RateLimit != want["createOrder"] {
		t.Errorf("describe_operation gives the rate limit %q (%v), want %q", d.RateLimit, err, want["createOrder"])
	}
}

// TestDocsRateLimited: docs/configuration.md shows the refusal of the
// example shop's sixth order in a row under the built-in limit of writes.
// The wait is 6 s less the time the five calls took, which rounds up to 6
// unless they took a second or more on a loaded machine: it is written 6.
func TestDocsRateLimited(t *testing.T) {
	shop, err := os.ReadFile("../examples/shop/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	up := newRecorder(t, nil)
	c, _ := callerOf(t, catalog(t, string(shop), ""), up.URL,
		config.Upstream{Schemes: map[string]config.Auth{"oauth": {Type: config.AuthNone}}}, func(string) string { return "" })
	order := `{"body":{"sku":"A1","quantity":1}}`
	for i := range 5 {
		if res := callTool(t, c, "createOrder", order); res.IsError {
			t.Fatalf("order %d: %s", i+1, res.Text)
		}
	}
	res := callTool(t, c, "createOrder", order)
	if w := wait(t, res); w < 5 || w > 6 {
		t.Fatalf("the sixth order waits %d s: %q", w, res.Text)
	}
	doccheck.Transcript(t, "toolgate-rate-limited", regexp.MustCompile(`Try again in \d+ s\.$`).ReplaceAllString(res.Text, "Try again in 6 s."))
}
