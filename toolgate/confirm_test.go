package toolgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestConfirmExposure checks where confirm may be said and what it
// decides: per tool whatever the class; by tag or default only for the
// classes named, never destructive or privileged by default; the narrowest
// tag rule wins, and a tool rule over them all.
func TestConfirmExposure(t *testing.T) {
	t.Parallel()
	type want struct {
		exposed, confirm bool
		rule, why        string
	}
	for _, tt := range []struct {
		name, config string
		tools        map[string]want
	}{
		{"one tool", "tools: {refundOrder: {expose: confirm}}", map[string]want{
			"refundOrder": {true, true, "tools.refundOrder.expose", "enabled by tools.refundOrder.expose: confirm: a person accepts each call"},
			"deleteOrder": {false, false, "built-in", "enable this one with tools.deleteOrder.expose: true, or confirm to have a person accept each call"},
			"createOrder": {true, false, "defaults.expose", "exposed by defaults.expose: read+write"},
		}},
		{"a tag naming the class", "tags: {payments: {expose: {show: [read, write], confirm: [destructive]}}}", map[string]want{
			"refundOrder": {true, true, "tags.payments.expose", "exposed by tags.payments.expose: {show: [read, write], confirm: [destructive]}: a person accepts each call"},
			"deleteOrder": {false, false, "built-in", "never exposed by default"},
		}},
		{"a tag confirming writes only", "tags: {orders: {expose: {confirm: write}}}", map[string]want{
			"createOrder": {true, true, "tags.orders.expose", "exposed by tags.orders.expose: {confirm: write}"},
			"listOrders":  {false, false, "tags.orders.expose", "hidden by tags.orders.expose: {confirm: write} (a read tool)"},
			"deleteOrder": {false, false, "tags.orders.expose", "shows write tools, not destructive ones"},
		}},
		{"the default confirming writes", "defaults: {expose: {show: read, confirm: write}}", map[string]want{
			"createOrder": {true, true, "defaults.expose", "exposed by defaults.expose: {show: read, confirm: write}: a person accepts each call"},
			"listOrders":  {true, false, "defaults.expose", "exposed by defaults.expose: {show: read, confirm: write}"},
			"refundOrder": {false, false, "built-in", "never exposed by default"},
		}},
		{"a tool rule over its tag's", "tags: {orders: {expose: {confirm: [read, write, destructive]}}}\ntools: {deleteOrder: {expose: true}}", map[string]want{
			"deleteOrder": {true, false, "tools.deleteOrder.expose", "enabled by tools.deleteOrder.expose: true"},
			"getOrder":    {true, true, "tags.orders.expose", "a person accepts each call"},
		}},
	} {
		cat := shop(t, tt.config)
		for name, w := range tt.tools {
			tl := cat.Lookup(name)
			if tl.Exposed != w.exposed || tl.Confirm != w.confirm || tl.ExposureRule != w.rule || !strings.Contains(tl.Exposure, w.why) {
				t.Errorf("%s: %s: exposed %v, confirm %v, by %q (%s); want %v, %v, by %q (%s)",
					tt.name, name, tl.Exposed, tl.Confirm, tl.ExposureRule, tl.Exposure, w.exposed, w.confirm, w.rule, w.why)
			}
		}
	}

	// With several tags, a confirmation one asks for is never dropped by
	// another that shows the tool plainly, and a tag that hides it wins.
	const doc = `{"openapi": "3.0.0", "paths": {"/a": {
	  "post": {"operationId": "confirmedAndShown", "tags": ["shown", "confirmed"], "responses": {}},
	  "put": {"operationId": "confirmedAndHidden", "tags": ["confirmed", "hidden"], "responses": {}}}}}`
	cat := catalog(t, doc, "tags: {shown: {expose: true}, confirmed: {expose: {confirm: write}}, hidden: {expose: read}}")
	if tl := cat.Lookup("confirmedAndShown"); !tl.Exposed || !tl.Confirm || tl.ExposureRule != "tags.confirmed.expose" {
		t.Errorf("confirmedAndShown: exposed %v, confirm %v, by %s", tl.Exposed, tl.Confirm, tl.ExposureRule)
	}
	if tl := cat.Lookup("confirmedAndHidden"); tl.Exposed || tl.Confirm || tl.ExposureRule != "tags.hidden.expose" {
		t.Errorf("confirmedAndHidden: exposed %v, confirm %v, by %s", tl.Exposed, tl.Confirm, tl.ExposureRule)
	}

	// The wait for the person: 5 min by default, then tag, then tool.
	cat = shop(t, "defaults: {confirm_timeout: 2m}\ntags: {orders: {confirm_timeout: 1m}}\ntools: {deleteOrder: {expose: confirm, confirm_timeout: 30s}}")
	for name, want := range map[string]time.Duration{"deleteOrder": 30 * time.Second, "getOrder": time.Minute, "refundOrder": 2 * time.Minute} {
		if got := cat.Lookup(name).ConfirmTimeout; got != want {
			t.Errorf("%s: confirm timeout %s, want %s", name, got, want)
		}
	}
	if got := shop(t, "").Lookup("deleteOrder").ConfirmTimeout; got != 5*time.Minute {
		t.Errorf("default confirm timeout %s, want 5m", got)
	}

	// Listed with the annotations of its class, and the agent told why a
	// call can come back unsent.
	tools, err := shop(t, "tools: {refundOrder: {expose: confirm}}").MCPTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		confirmNote := strings.Contains(tl.Description, "shown to a person first")
		if tl.Name == "refundOrder" && (!*tl.Annotations.DestructiveHint || tl.Annotations.ReadOnlyHint || !confirmNote) {
			t.Errorf("refundOrder listed as %+v: %q", tl.Annotations, tl.Description)
		}
		if tl.Name != "refundOrder" && confirmNote {
			t.Errorf("%s says it is confirmed: %q", tl.Name, tl.Description)
		}
	}
}

const confirmSecret = "s3cr3t-upstream-token"

// confirmEnv is toolgate serving the shop with confirmations, in process,
// against the shop API on loopback, which needs the upstream secret and
// counts what it applies.
type confirmEnv struct {
	api  *shopapi.API
	up   *httptest.Server
	srv  *mcp.Server
	j    *journal.Journal
	mode config.Mode
}

func newConfirmEnv(t *testing.T, mode config.Mode, configYAML string, upstream http.Handler) *confirmEnv {
	t.Helper()
	e := &confirmEnv{api: shopapi.New(), mode: mode}
	e.api.Token = confirmSecret
	if upstream == nil {
		upstream = e.api
	}
	e.up = httptest.NewServer(upstream)
	t.Cleanup(e.up.Close)
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "toolgate.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.j = journal.New(db.JournalStore(), journal.Options{})
	cat := shop(t, configYAML)
	auth := config.Auth{Type: "bearer", Env: "SHOP_TOKEN"}
	caller, err := toolgate.NewCaller(cat, e.up.URL, config.Upstream{Auth: auth}, func(string) string { return confirmSecret }, nil, e.j)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = newServer(t, mode, cat, caller)
	return e
}

// connect connects a client at protocol version (empty: the newest).
func (e *confirmEnv) connect(t *testing.T, opts *mcp.ClientOptions, version string) *gate {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := e.srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gate{cs, e.mode}
}

// person answers elicitations as told, and keeps what it was asked.
type person struct {
	mu     sync.Mutex
	answer func(context.Context) (*mcp.ElicitResult, error)
	asked  []*mcp.ElicitParams
}

func (p *person) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	p.asked = append(p.asked, req.Params)
	answer := p.answer
	p.mu.Unlock()
	return answer(ctx)
}

func (p *person) says(r *mcp.ElicitResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = func(context.Context) (*mcp.ElicitResult, error) { return r, nil }
}

func (p *person) questions() []*mcp.ElicitParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), p.asked...)
}

var (
	accept   = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"send": true}}
	unticked = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"send": false}}
	decline  = &mcp.ElicitResult{Action: "decline"}
	cancel   = &mcp.ElicitResult{Action: "cancel"}
)

// protocols are the two ways a server asks: with a request of its own
// while it serves the call (up to 2025-11-25), and in the call's result,
// the client calling again with the answer (2026-07-28).
var protocols = []struct{ name, version string }{{"asked during the call", "2025-11-25"}, {"asked in the result", ""}}

// TestConfirmThroughElicitation calls a destructive tool enabled with
// confirm through the Go SDK's client, which answers each question as a
// person would, and counts what the upstream applies.
func TestConfirmThroughElicitation(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		for _, proto := range protocols {
			t.Run(proto.name, func(t *testing.T) {
				e := newConfirmEnv(t, mode, "tools: {refundOrder: {expose: confirm}, listOrders: {expose: confirm}}", nil)
				p := &person{}
				cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: p.handle}, proto.version)
				if got := cs.InitializeResult().ProtocolVersion; proto.version != "" && got != proto.version || proto.version == "" && got < "2026-07-28" {
					t.Fatalf("negotiated protocol %s", got)
				}
				refund := map[string]any{"id": "o1", "X-Reason": "damaged"}
				for _, c := range []struct {
					answer *mcp.ElicitResult
					want   string
				}{
					{decline, "NOT SENT: the person declined this call to refundOrder. Nothing was sent. Do not call it again unless the person asks you to."},
					{cancel, "NOT SENT: the person dismissed this call to refundOrder without accepting it. Nothing was sent."},
					{unticked, "NOT SENT: the person declined this call to refundOrder."},
				} {
					p.says(c.answer)
					res, text := call(t, cs, "refundOrder", refund)
					if res == nil || !res.IsError || text != c.want && !strings.HasPrefix(text, c.want) {
						t.Errorf("answered %s: %q", c.answer.Action, text)
					}
				}
				if n := e.api.Effects(); n != 0 {
					t.Fatalf("the upstream applied %d changes after declines, want 0", n)
				}
				// A declined call leaves nothing open in the journal: it never
				// came near the boundary.
				if ops, err := e.j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind}); err != nil || len(ops) != 0 {
					t.Fatalf("journal after declines: %v %+v", err, ops)
				}

				p.says(accept)
				res, text := call(t, cs, "refundOrder", refund)
				if res == nil || res.IsError || !strings.Contains(text, `"refunded":"o1"`) || e.api.Effects() != 1 {
					t.Fatalf("accepted: %q; upstream applied %d", text, e.api.Effects())
				}
				ops, err := e.j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind})
				if err != nil || len(ops) != 1 || ops[0].State != journal.Applied || ops[0].Evidence["confirmed"] == nil {
					t.Fatalf("journal after the accepted call: %v %+v", err, ops)
				}

				// The person saw exactly what was sent, without the secret.
				asked := p.questions()
				if len(asked) != 4 {
					t.Fatalf("the person was asked %d times, want 4", len(asked))
				}
				q := asked[0]
				for _, want := range []string{"refundOrder, a destructive tool", "POST " + e.up.URL + "/orders/o1/refund\n", "X-Reason: damaged\n", `"Send it" ticked`} {
					if !strings.Contains(q.Message, want) {
						t.Errorf("the question lacks %q:\n%s", want, q.Message)
					}
				}
				if strings.Contains(q.Message, confirmSecret) || !strings.Contains(q.Message, "\nAuthorization: [the API's credentials, added as it is sent; not shown]\n") {
					t.Errorf("the question shows the credentials:\n%s", q.Message)
				}
				schema, _ := json.Marshal(q.RequestedSchema)
				if !strings.Contains(string(schema), `"send":{`) || !strings.Contains(string(schema), `"required":["send"]`) {
					t.Errorf("requested schema %s", schema)
				}

				// A read can be confirmed too, and its question shows the
				// query as it is sent.
				res, text = call(t, cs, "listOrders", map[string]any{"limit": 5})
				if res == nil || res.IsError || !strings.Contains(p.questions()[4].Message, "GET "+e.up.URL+"/orders?limit=5\n") {
					t.Errorf("listOrders: %q; asked %q", text, p.questions()[4].Message)
				}

				// A client that cannot ask a person gets a refusal, and
				// nothing is sent.
				bare := e.connect(t, nil, proto.version)
				res, text = call(t, bare, "refundOrder", refund)
				want := "NOT SENT: refundOrder needs a person's confirmation through MCP elicitation (a form), which this client does not support. Nothing was sent."
				if res == nil || !res.IsError || !strings.HasPrefix(text, want) || e.api.Effects() != 1 {
					t.Errorf("client without elicitation: %q; upstream applied %d", text, e.api.Effects())
				}
			})
		}
	})
}

// TestConfirmShowsTheBody checks that the question shows a body as it is
// sent.
func TestConfirmShowsTheBody(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		e := newConfirmEnv(t, mode, "tools: {createOrder: {expose: confirm}}", nil)
		p := &person{}
		p.says(accept)
		cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: p.handle}, "")
		res, text := call(t, cs, "createOrder", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 2}})
		if res == nil || res.IsError || e.api.Orders() != 1 {
			t.Fatalf("createOrder: %q", text)
		}
		msg := p.questions()[0].Message
		for _, want := range []string{"POST " + e.up.URL + "/orders\n", "Content-Type: application/json\n", "\n{\"quantity\":2,\"sku\":\"A1\"}\n"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the question lacks %q:\n%s", want, msg)
			}
		}
		if strings.Contains(msg, "The agent's arguments") {
			t.Errorf("the question repeats the arguments of a body shown whole:\n%s", msg)
		}
	})
}

// TestConfirmWaitIsBounded checks that the wait for the person is bounded
// by confirm_timeout, and that the tool's deadline starts only once they
// have answered.
func TestConfirmWaitIsBounded(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		for _, proto := range protocols {
			t.Run(proto.name, func(t *testing.T) {
				e := newConfirmEnv(t, mode, "tools: {refundOrder: {expose: confirm, deadline: 300ms, confirm_timeout: 2s}, deleteOrder: {expose: confirm, confirm_timeout: 200ms}}", nil)
				p := &person{}
				cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: p.handle}, proto.version)

				// The person takes longer than the deadline to accept; the
				// call still has its whole deadline.
				p.answer = func(ctx context.Context) (*mcp.ElicitResult, error) {
					time.Sleep(600 * time.Millisecond)
					return accept, nil
				}
				if res, text := call(t, cs, "refundOrder", map[string]any{"id": "o1"}); res == nil || res.IsError || e.api.Effects() != 1 {
					t.Fatalf("accepted after longer than the deadline: %q", text)
				}

				// The person does not answer within the time allowed.
				p.answer = func(ctx context.Context) (*mcp.ElicitResult, error) {
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(400 * time.Millisecond):
						return accept, nil
					}
				}
				res, text := call(t, cs, "deleteOrder", map[string]any{"id": "o1"})
				if res == nil || !res.IsError || !strings.HasPrefix(text, "NOT SENT: ") || !strings.Contains(text, "200ms") || e.api.Effects() != 1 {
					t.Errorf("answer after the time allowed: %q; upstream applied %d", text, e.api.Effects())
				}
			})
		}
	})
}

// TestConfirmAnswerCountsOnce plays the client's side of the newest
// protocol by hand: an answer counts for the call it was asked about,
// once.
func TestConfirmAnswerCountsOnce(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		e := newConfirmEnv(t, mode, "tools: {refundOrder: {expose: confirm}}", nil)
		cs := e.connect(t, &mcp.ClientOptions{
			MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		}, "")
		ctx := context.Background()
		refund := func(id, state string, answer mcp.InputResponse) *mcp.CallToolResult {
			t.Helper()
			p := cs.params("refundOrder", map[string]any{"id": id})
			p.RequestState = state
			if answer != nil {
				p.InputResponses = mcp.InputResponseMap{"confirm": answer}
			}
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		text := func(r *mcp.CallToolResult) string {
			if len(r.Content) == 0 {
				return ""
			}
			return r.Content[0].(*mcp.TextContent).Text
		}
		asked := refund("o1", "", nil)
		q, ok := asked.InputRequests["confirm"].(*mcp.ElicitParams)
		if !asked.NeedsInput() || !ok || !strings.Contains(q.Message, "/orders/o1/refund") || asked.RequestState == "" || e.api.Effects() != 0 {
			t.Fatalf("first call: %+v", asked)
		}
		// An answer with a state that is not the server's, or that was asked
		// about other arguments, is a new question.
		for _, c := range []struct{ id, state string }{{"o1", "forged.state"}, {"o1", ""}, {"o2", asked.RequestState}} {
			if r := refund(c.id, c.state, accept); !r.NeedsInput() || e.api.Effects() != 0 {
				t.Errorf("answer for %s with state %.12q: %+v %q", c.id, c.state, r, text(r))
			}
		}
		if r := refund("o1", asked.RequestState, accept); r.IsError || !strings.Contains(text(r), "refunded") || e.api.Effects() != 1 {
			t.Fatalf("accepted: %q", text(r))
		}
		r := refund("o1", asked.RequestState, accept)
		if !r.IsError || !strings.Contains(text(r), "has already been used for a call") || e.api.Effects() != 1 {
			t.Errorf("the same answer again: %q; upstream applied %d", text(r), e.api.Effects())
		}
	})
}

// TestConfirmNotAskedWhenRefused checks that a person is not asked about
// a call the guard refuses: one on a resource whose last call is
// ambiguous.
func TestConfirmNotAskedWhenRefused(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		var refunds atomic.Int32
		api := shopapi.New()
		api.Token = confirmSecret
		up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/refund") && refunds.Add(1) == 1 {
				http.Error(w, "bad gateway", http.StatusBadGateway)
				return
			}
			api.ServeHTTP(w, r)
		})
		e := newConfirmEnv(t, mode, "tools: {refundOrder: {expose: confirm}}", up)
		p := &person{}
		p.says(accept)
		cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: p.handle}, "")
		if _, text := call(t, cs, "refundOrder", map[string]any{"id": "o1"}); !strings.HasPrefix(text, "OUTCOME UNKNOWN") {
			t.Fatalf("first refund: %q", text)
		}
		_, text := call(t, cs, "refundOrder", map[string]any{"id": "o1", "X-Reason": "again"})
		if !strings.HasPrefix(text, "REFUSED") || len(p.questions()) != 1 || refunds.Load() != 1 {
			t.Errorf("second refund: %q; asked %d times; upstream saw %d refunds", text, len(p.questions()), refunds.Load())
		}
	})
}

// TestConfirmWithoutAPerson checks that a call path that gives no
// Confirmer cannot send a call that needs one.
func TestConfirmWithoutAPerson(t *testing.T) {
	t.Parallel()
	api := shopapi.New()
	up := httptest.NewServer(api)
	defer up.Close()
	c, _ := caller(t, shop(t, "tools: {refundOrder: {expose: confirm}}"), up.URL, config.Auth{}, "")
	res := callTool(t, c, "refundOrder", `{"id": "o1"}`)
	want := "NOT SENT: refundOrder needs a person's confirmation of each call, and this call came by a way that cannot ask one. Nothing was sent."
	if !res.IsError || !strings.HasPrefix(res.Text, want) || api.Effects() != 0 {
		t.Errorf("%q; upstream applied %d", res.Text, api.Effects())
	}
}

// notes is an API whose purge sends a body and carries an API key in the
// query, for the exact request a person confirms.
const notes = `openapi: 3.0.3
info: {title: Notes, version: "1"}
components:
  securitySchemes:
    inQuery: {type: apiKey, in: query, name: api_key}
paths:
  /v1/notes/{id}/purge:
    post:
      operationId: purgeNote
      summary: Permanently delete a note and its history
      security: [{inQuery: []}]
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: mode, in: query, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {text: {type: string}}}
      responses: {"200": {description: purged}}
`

// TestConfirmShowsTheExactRequest calls a tool over Streamable HTTP on
// loopback with the Go SDK's client, which answers each question as a
// person would, in both protocol generations: the question shows the
// method, the URL with its credentials redacted, the body (cut, with its
// size, when it is large) and the tool's risk reasons, and the upstream
// receives that very request.
func TestConfirmShowsTheExactRequest(t *testing.T) {
	const key, baseSecret = "k-secret-42", "base-s3cret-9"
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			up := newRecorder(t, nil)
			c, _ := authed(t, notes, "upstream:\n  schemes:\n    inQuery: {type: api_key, env: NOTES_KEY}\ntools:\n  purgeNote: {expose: confirm}\n",
				up.URL+"/?session="+baseSecret, map[string]string{"NOTES_KEY": key})
			gate := httpGate(t, c.cat, c.Caller, toolgate.HTTPOptions{})
			p := &person{}
			p.says(accept)
			ctx := context.Background()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: p.handle}).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: gate, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: proto.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			reasons := c.cat.Lookup("purgeNote").Risk.Reasons
			if len(reasons) == 0 {
				t.Fatal("purgeNote has no risk reasons to show")
			}
			large := strings.Repeat("0123456789abcdef", 512) // 8 KiB
			for i, text := range []string{"old draft", large} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "purgeNote", Arguments: map[string]any{"id": "n1", "mode": "hard", "body": map[string]any{"text": text}}})
				if err != nil || res.IsError {
					t.Fatalf("purgeNote: %v %+v", err, res)
				}
				sent := up.requests()[i]
				asked := p.questions()
				if len(asked) != i+1 {
					t.Fatalf("the person was asked %d times, want %d", len(asked), i+1)
				}
				msg := asked[i].Message
				shownURL := up.URL + "/v1/notes/n1/purge?session=[redacted]&mode=hard"
				if !strings.Contains(msg, "POST "+shownURL+"\n") || !strings.Contains(msg, "[the API's credentials in the query parameter api_key (inQuery), added as it is sent; not shown]") {
					t.Errorf("the question does not show the request line and where the key goes:\n%s", msg)
				}
				if strings.Contains(msg, key) || strings.Contains(msg, baseSecret) {
					t.Errorf("the question shows a secret:\n%s", msg)
				}
				// What arrived is what was shown, with the credentials the
				// question named in place of [redacted].
				wantTarget := strings.Replace(strings.TrimPrefix(shownURL, up.URL), "[redacted]", baseSecret, 1) + "&api_key=" + key
				if sent.Method != "POST" || sent.Target != wantTarget {
					t.Errorf("the upstream received %s %s, want POST %s", sent.Method, sent.Target, wantTarget)
				}
				if !strings.Contains(sent.Body, text) {
					t.Fatalf("the upstream received the body %.80q", sent.Body)
				}
				if i == 0 && !strings.Contains(msg, "\n"+sent.Body+"\n") {
					t.Errorf("the question does not show the body sent, %q:\n%s", sent.Body, msg)
				}
				if i == 1 && (!strings.Contains(msg, "\n"+sent.Body[:4096]+"…") || strings.Contains(msg, sent.Body[:4097]) ||
					!strings.Contains(msg, fmt.Sprintf("The body is %d bytes of application/json; the first 4096 are shown.", len(sent.Body)))) {
					t.Errorf("the question does not show the large body cut, with its size (%d bytes):\n%.300s…", len(sent.Body), msg)
				}
				if !strings.Contains(msg, "What it does: toolgate judges purgeNote destructive because\n") {
					t.Errorf("the question does not say what the call does:\n%s", msg)
				}
				for _, why := range reasons {
					if !strings.Contains(msg, "- "+why+"\n") {
						t.Errorf("the question lacks the reason %q:\n%s", why, msg)
					}
				}
			}
		})
	}
}
