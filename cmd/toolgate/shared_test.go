package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/internal/testdb"
)

// sharedJournals are the journals several servers share: one SQLite file,
// one PostgreSQL database.
var sharedJournals = []struct {
	name string
	db   func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "journal.db") }},
	{"postgres", func(t *testing.T) string { return testdb.Postgres(t) }},
}

// slowUpstream serves the example API on loopback, answering each order
// placement delay after it applied it.
func slowUpstream(t *testing.T, delay time.Duration) (*shopapi.API, string) {
	t.Helper()
	api := shopapi.New()
	return api, loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			defer time.Sleep(delay) // applied at once, answered late
		}
		api.ServeHTTP(w, r)
	}))
}

// connectHTTP connects a go-sdk client named name to the server at url.
func connectHTTP(t *testing.T, name, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// resultText is the text toolgate answers a call with, its first content.
func resultText(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// TestGuardAcrossServers runs two toolgate serve --http processes on one
// journal, and calls the same write on both at once, by two clients: the
// journal's guard lets one through and refuses the other, as one server
// alone would, however many servers share it.
func TestGuardAcrossServers(t *testing.T) {
	t.Parallel()
	const rounds = 5
	for _, sj := range sharedJournals {
		t.Run(sj.name, func(t *testing.T) {
			t.Parallel()
			api, base := slowUpstream(t, 700*time.Millisecond)
			env := []string{"TOOLGATE_DB=" + sj.db(t)}
			var sessions []*mcp.ClientSession
			for i := range 2 {
				url := serveHTTP(t, env, "--http", "127.0.0.1:0", "--upstream", base)
				sessions = append(sessions, connectHTTP(t, fmt.Sprintf("agent-%d", i), url))
			}
			for round := 1; round <= rounds; round++ {
				before := api.Effects()
				// The same call on both, each round its own.
				params := &mcp.CallToolParams{Name: "createOrder", Arguments: map[string]any{"body": map[string]any{"sku": "G1", "quantity": round}}}
				results := make([]*mcp.CallToolResult, len(sessions))
				errs := make([]error, len(sessions))
				var ready, wg sync.WaitGroup
				ready.Add(len(sessions))
				for i, cs := range sessions {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ready.Done()
						ready.Wait()
						results[i], errs[i] = cs.CallTool(context.Background(), params)
					}()
				}
				wg.Wait()
				applied, refused := 0, 0
				for i, r := range results {
					if errs[i] != nil {
						t.Fatalf("round %d, server %d: %v", round, i, errs[i])
					}
					switch text := resultText(r); {
					case !r.IsError:
						applied++
					case strings.HasPrefix(text, "REFUSED: an identical call to createOrder (same arguments) is in flight. Nothing was sent."):
						refused++
					default:
						t.Errorf("round %d, server %d: %s", round, i, text)
					}
				}
				if effects := api.Effects() - before; effects != 1 || applied != 1 || refused != 1 {
					t.Fatalf("round %d: %d effects upstream, %d calls applied, %d refused; want 1, 1, 1", round, effects, applied, refused)
				}
			}
		})
	}
}

// dropFirstAnswer serves a proxy to the toolgate endpoint target that
// passes every request on, but for the first one match picks it waits for
// toolgate's whole answer (the call is then applied and recorded), and
// closes the client's connection instead of passing the answer back: the
// stream breaks on its way to the client.
func dropFirstAnswer(t *testing.T, target string, match func(body []byte) bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	var dropped atomic.Bool
	return loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !match(body) || dropped.Swap(true) {
			rp.ServeHTTP(w, r)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, u.Scheme+"://"+u.Host+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return
		}
		req.Header = r.Header.Clone()
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		panic(http.ErrAbortHandler) // the client's connection closes unanswered
	})) + u.Path
}

// TestReissuedCallReplayed breaks the stream of a write after the upstream
// applied it, and the client re-issues the call, as a new request, through
// another server sharing the journal: it gets the recorded answer, marked
// as a replay, and the upstream sees one effect. A call sent again on
// purpose (_meta toolgate/again) and the same call from another client
// are sent.
func TestReissuedCallReplayed(t *testing.T) {
	for _, sj := range sharedJournals {
		t.Run(sj.name, func(t *testing.T) {
			api, base := upstream(t)
			env := []string{"TOOLGATE_DB=" + sj.db(t)}
			a := serveHTTP(t, env, "--http", "127.0.0.1:0", "--upstream", base)
			b := serveHTTP(t, env, "--http", "127.0.0.1:0", "--upstream", base)
			proxy := dropFirstAnswer(t, a, func(body []byte) bool { return bytes.Contains(body, []byte(`"createOrder"`)) })
			ctx := context.Background()
			params := func() *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: "createOrder", Arguments: map[string]any{"body": map[string]any{"sku": "R1", "quantity": 2}}}
			}

			first := connectHTTP(t, "agent", proxy)
			if res, err := first.CallTool(ctx, params()); err == nil {
				t.Fatalf("the first call's stream did not break: %+v", res)
			}
			if api.Effects() != 1 {
				t.Fatalf("%d effects upstream after the first call; want 1", api.Effects())
			}

			// The client re-issues the call: a new request, on a new
			// session, which lands on the other server.
			again := connectHTTP(t, "agent", b)
			res, err := again.CallTool(ctx, params())
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(res)
			if res.IsError || !strings.HasPrefix(text, "REPLAYED: this call was already applied at ") || !strings.Contains(text, "nothing was sent again") {
				t.Fatalf("re-issued call: %s", text)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if sc["sku"] != "R1" || sc["id"] != "o1" || res.Meta[toolgateReplayed] == nil {
				t.Errorf("re-issued call: structured %v, _meta %v; want the first call's order o1, marked as replayed", res.StructuredContent, res.Meta)
			}
			if api.Effects() != 1 {
				t.Fatalf("%d effects upstream after the re-issued call; want 1", api.Effects())
			}

			// On purpose, a second effect.
			p := params()
			p.Meta = mcp.Meta{"toolgate/again": true}
			if res, err := again.CallTool(ctx, p); err != nil || res.IsError || strings.HasPrefix(resultText(res), "REPLAYED") || api.Effects() != 2 {
				t.Fatalf("a call sent again on purpose: %v %s; %d effects, want 2", err, resultText(res), api.Effects())
			}
			// Another client's identical call is its own.
			other := connectHTTP(t, "another-agent", b)
			if res, err := other.CallTool(ctx, params()); err != nil || res.IsError || strings.HasPrefix(resultText(res), "REPLAYED") || api.Effects() != 3 {
				t.Fatalf("another client's identical call: %v %s; %d effects, want 3", err, resultText(res), api.Effects())
			}
		})
	}
}

// toolgateReplayed is the _meta key of a replayed result.
const toolgateReplayed = "toolgate/replayed"
