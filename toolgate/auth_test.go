package toolgate_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// authed returns a caller of the document's tools (a path, or YAML or
// JSON text) under the configuration cfgYAML, against upstream, with env
// as the environment, and its journal.
func authed(t *testing.T, document, cfgYAML, upstream string, env map[string]string) (testCaller, *journal.Journal) {
	t.Helper()
	cat, cfg := catalogAndConfig(t, document, cfgYAML)
	return callerOf(t, cat, upstream, cfg.Upstream, func(k string) string { return env[k] })
}

// anyTool calls the tool name whether it is exposed or not.
func anyTool(t *testing.T, c testCaller, name, args string) toolgate.Result {
	t.Helper()
	tool := c.cat.Lookup(name)
	if tool == nil {
		t.Fatalf("no tool %s", name)
	}
	return c.Call(context.Background(), tool, json.RawMessage(args), nil)
}

// Slack's document takes the token as a parameter of every method, in a
// header, the query or the form. toolgate fills it from the configured
// credential, where the document places it, and sends it as OAuth2's
// bearer token too; the agent can neither see it in a tool's schema nor
// give one.
func TestSlackTokenParametersAreFilledNeverAsked(t *testing.T) {
	t.Parallel()
	const token = "xoxb-1-slack-secret"
	cfg := "upstream:\n  schemes:\n    slackAuth: {type: bearer, env: SLACK_TOKEN}\n"
	up := newRecorder(t, nil)
	c, j := authed(t, testspecs.Corpus(t, "slack-v2.json"), cfg, up.URL, map[string]string{"SLACK_TOKEN": token})

	for _, name := range []string{"conversations_history", "chat_postMessage", "files_upload"} {
		schema, err := c.cat.ListedInputSchema(c.cat.Lookup(name))
		if err != nil || strings.Contains(string(schema), `"token"`) {
			t.Errorf("%s's schema asks for the token: %s (%v)", name, schema, err)
		}
	}
	// The agent's token is refused, and nothing is sent.
	res := anyTool(t, c, "conversations_history", `{"token":"agent-made-up","channel":"C1"}`)
	if !res.IsError || !strings.Contains(res.Text, "token is not allowed") || len(up.requests()) != 0 {
		t.Fatalf("an agent's token: %+v, %d requests", res, len(up.requests()))
	}
	res = anyTool(t, c, "files_upload", `{"body":{"channels":"C1","content":"hi","token":"agent-made-up"}}`)
	if len(up.requests()) != 0 && strings.Contains(up.requests()[0].Body, "agent-made-up") {
		t.Fatalf("the agent's token went in the form: %+v", up.requests())
	}

	for _, tt := range []struct{ tool, args, target, header, body string }{
		{"conversations_history", `{"channel":"C1","limit":2}`, "/conversations.history?channel=C1&limit=2&token=" + token, "", ""},
		{"chat_postMessage", `{"body":{"channel":"C1","text":"hi"}}`, "/chat.postMessage", token, "channel=C1&text=hi"},
		{"files_upload", `{"body":{"channels":"C1","content":"hi"}}`, "/files.upload", "", "channels=C1&content=hi&token=" + token},
	} {
		before := len(up.requests())
		if res := anyTool(t, c, tt.tool, tt.args); res.IsError {
			t.Fatalf("%s: %s", tt.tool, res.Text)
		}
		reqs := up.requests()
		if len(reqs) != before+1 {
			t.Fatalf("%s: %d requests", tt.tool, len(reqs)-before)
		}
		r := reqs[len(reqs)-1]
		if r.Target != tt.target || r.Header.Get("Token") != tt.header || r.Body != tt.body || r.Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("%s sent %s (Token: %q, Authorization: %q) %q\nwant %s (Token: %q, Authorization: Bearer %s) %q",
				tt.tool, r.Target, r.Header.Get("Token"), r.Header.Get("Authorization"), r.Body, tt.target, tt.header, token, tt.body)
		}
	}
	noSecretIn(t, j, token)
}

// noSecretIn checks that no call the journal holds keeps secret, in its
// evidence, its error or its history.
func noSecretIn(t *testing.T, j *journal.Journal, secrets ...string) {
	t.Helper()
	ops, err := j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		history, _ := j.History(context.Background(), op.Key)
		all, _ := json.Marshal(map[string]any{"op": op, "history": history})
		for _, s := range secrets {
			if strings.Contains(string(all), s) || strings.Contains(string(all), url.QueryEscape(s)) {
				t.Errorf("the journal keeps %q: %s", s, all)
			}
		}
	}
}

// Uber's document takes its server token in the query, as an apiKey
// scheme: toolgate adds it there.
func TestAPIKeyInTheQuery(t *testing.T) {
	t.Parallel()
	const key = "uber-server-token-42"
	up := newRecorder(t, nil)
	c, _ := authed(t, testspecs.Corpus(t, "oai-examples/v2.0_yaml_uber.yaml"), "upstream:\n  schemes:\n    apikey: {type: api_key, env: UBER_KEY}\n",
		up.URL, map[string]string{"UBER_KEY": key})
	if res := callTool(t, c, "get_products", `{"latitude":37.7,"longitude":-122.4}`); res.IsError {
		t.Fatal(res.Text)
	}
	if got, want := up.only(t).Target, "/products?latitude=37.7&longitude=-122.4&server_token="+key; got != want {
		t.Errorf("sent %s, want %s", got, want)
	}
}

// apiKeys declares an API key in each place OpenAPI allows, and
// operations that require one, two together, or either of two.
const apiKeys = `openapi: 3.0.3
info: {title: Keys, version: "1"}
servers: [{url: /v1}]
components:
  securitySchemes:
    inHeader: {type: apiKey, in: header, name: X-API-Key}
    inQuery: {type: apiKey, in: query, name: api_key}
    inCookie: {type: apiKey, in: cookie, name: session}
    bearer: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic}
paths:
  /header:
    get: {operationId: header, security: [{inHeader: []}], parameters: [{name: X-API-Key, in: header, schema: {type: string}}, {name: q, in: query, schema: {type: string}}], responses: {"200": {description: ok}}}
  /query:
    get: {operationId: query, security: [{inQuery: []}], parameters: [{name: api_key, in: query, schema: {type: string}}, {name: q, in: query, schema: {type: string}}], responses: {"200": {description: ok}}}
  /cookie:
    get: {operationId: cookie, security: [{inCookie: []}], parameters: [{name: theme, in: cookie, schema: {type: string}}], responses: {"200": {description: ok}}}
  /both:
    get: {operationId: both, security: [{inHeader: [], inQuery: []}], responses: {"200": {description: ok}}}
  /either:
    get: {operationId: either, security: [{bearer: []}, {basic: []}], responses: {"200": {description: ok}}}
  /public:
    get: {operationId: public, security: [], responses: {"200": {description: ok}}}
  /optional:
    get: {operationId: optional, security: [{bearer: []}, {}], responses: {"200": {description: ok}}}
`

// Each kind of credential goes where its scheme says, for the operations
// that require it, and only those; the parameters that carry an API key
// are the caller's, never an argument; a relative server is resolved
// against the upstream.
func TestEachSchemeWhereItsDocumentSays(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KEY_H": "hdr-key-1", "KEY_Q": "qry key/2", "KEY_C": "ck-3", "LOGIN": "ada:pa55-w0rd"}
	cfg := `upstream:
  schemes:
    inHeader: {type: api_key, env: KEY_H}
    inQuery: {type: api_key, env: KEY_Q}
    inCookie: {type: api_key, env: KEY_C}
    basic: {type: basic, env: LOGIN}
`
	up := newRecorder(t, nil)
	c, _ := authed(t, apiKeys, cfg, up.URL, env)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ada:pa55-w0rd"))
	for _, tt := range []struct {
		tool, args, target string
		header             map[string]string
	}{
		{"header", `{"q":"x"}`, "/v1/header?q=x", map[string]string{"X-Api-Key": "hdr-key-1", "Authorization": "", "Cookie": ""}},
		{"query", `{"q":"x"}`, "/v1/query?q=x&api_key=qry%20key%2F2", map[string]string{"X-Api-Key": "", "Authorization": ""}},
		{"cookie", `{"theme":"dark"}`, "/v1/cookie", map[string]string{"Cookie": "theme=dark; session=ck-3"}},
		{"both", `{}`, "/v1/both?api_key=qry%20key%2F2", map[string]string{"X-Api-Key": "hdr-key-1"}},
		// bearer is not configured; basic, the other alternative, is.
		{"either", `{}`, "/v1/either", map[string]string{"Authorization": basic}},
		{"public", `{}`, "/v1/public", map[string]string{"Authorization": "", "X-Api-Key": "", "Cookie": ""}},
		{"optional", `{}`, "/v1/optional", map[string]string{"Authorization": ""}},
	} {
		before := len(up.requests())
		if res := callTool(t, c, tt.tool, tt.args); res.IsError {
			t.Fatalf("%s: %s", tt.tool, res.Text)
		}
		r := up.requests()[before]
		if r.Target != tt.target {
			t.Errorf("%s sent %s, want %s", tt.tool, r.Target, tt.target)
		}
		for h, want := range tt.header {
			if got := r.Header.Get(h); got != want {
				t.Errorf("%s sent %s: %q, want %q", tt.tool, h, got, want)
			}
		}
	}
	for _, tool := range []string{"header", "query"} {
		if res := callTool(t, c, tool, `{"X-API-Key":"agent","api_key":"agent"}`); !res.IsError || !strings.Contains(res.Text, "is not allowed") {
			t.Errorf("%s took the key from the agent: %s", tool, res.Text)
		}
	}
	row := inspectRow(t, c.cat, "either")
	if row.Auth != "basic" || !strings.Contains(row.AuthRequires, "bearer (HTTP bearer) or basic (HTTP basic)") ||
		len(row.AuthUses) != 1 || row.AuthUses[0] != "basic: basic from $LOGIN (upstream.schemes.basic)" {
		t.Errorf("inspect's row of either: %+v", row)
	}
}

func inspectRow(t *testing.T, cat *toolgate.Catalog, name string) toolgate.Row {
	t.Helper()
	rows, _, err := cat.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %s", name)
	return toolgate.Row{}
}

// A bearer token goes as "Authorization: Bearer"; a basic secret must be
// user:password, and the caller says so without showing it.
func TestBearerAndBasic(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	c, _ := authed(t, apiKeys, "upstream:\n  schemes:\n    bearer: {type: bearer, env: TOKEN}\n", up.URL, map[string]string{"TOKEN": "tok-9"})
	callTool(t, c, "either", `{}`)
	if got := up.only(t).Header.Get("Authorization"); got != "Bearer tok-9" {
		t.Errorf("Authorization %q", got)
	}
	cat, cfg := catalogAndConfig(t, apiKeys, "upstream:\n  schemes:\n    basic: {type: basic, env: LOGIN}\n")
	_, err := toolgate.NewCaller(cat, up.URL, cfg.Upstream, func(string) string { return "just-a-password" }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "$LOGIN") || !strings.Contains(err.Error(), "user:password") || strings.Contains(err.Error(), "just-a-password") {
		t.Errorf("a basic secret without a colon: %v", err)
	}
}

// A secret comes from a file only its owner may read, or not at all.
func TestSecretFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	if err := os.WriteFile(file, []byte("file-key-7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "upstream:\n  schemes:\n    inHeader: {type: api_key, file: " + file + "}\n"
	up := newRecorder(t, nil)
	c, _ := authed(t, apiKeys, cfg, up.URL, nil)
	callTool(t, c, "header", `{}`)
	if got := up.only(t).Header.Get("X-Api-Key"); got != "file-key-7" {
		t.Errorf("the key from the file: %q", got)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	cat, parsed := catalogAndConfig(t, apiKeys, cfg)
	_, err := toolgate.NewCaller(cat, up.URL, parsed.Upstream, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "may be read by others (mode 0644)") || !strings.Contains(err.Error(), "chmod 600 "+file) {
		t.Errorf("a secret others may read: %v", err)
	}
}

// tokenEndpoint is an OAuth2 token endpoint on loopback that checks the
// client's credentials as RFC 6749 section 4.4 has them sent, and hands
// out numbered tokens valid for expiresIn seconds.
type tokenEndpoint struct {
	*recorder
	mu        sync.Mutex
	issued    []string // the scopes each token was asked for
	expiresIn int
}

func newTokenEndpoint(t *testing.T, clientID, secret string, expiresIn int) *tokenEndpoint {
	e := &tokenEndpoint{expiresIn: expiresIn}
	e.recorder = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		id, pass, ok := r.BasicAuth()
		if r.Method != http.MethodPost || !ok || id != clientID || pass != secret || r.PostFormValue("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		e.mu.Lock()
		e.issued = append(e.issued, r.PostFormValue("scope"))
		n := len(e.issued)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"at-%d","token_type":"bearer","expires_in":%d}`, n, e.expiresIn)
	})
	return e
}

func (e *tokenEndpoint) scopes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.issued...)
}

// oauthDoc requires OAuth2 client credentials, with a scope per
// operation; its token endpoint is where the test puts it.
func oauthDoc(tokenURL string) string {
	return `openapi: 3.0.3
info: {title: Orders, version: "1"}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: ` + tokenURL + `
          scopes: {orders.read: read, orders.write: write}
paths:
  /orders:
    get: {operationId: listOrders, security: [{oauth: [orders.read]}], responses: {"200": {description: ok}}}
    post: {operationId: createOrder, security: [{oauth: [orders.write, orders.read]}], responses: {"201": {description: ok}}}
`
}

// OAuth2 client credentials: a token from the scheme's token endpoint,
// asked with the scopes each operation requires, kept and used again
// until shortly before it expires, and sent as a bearer token to the
// upstream alone; the client's secret goes to the token endpoint alone.
func TestOAuth2ClientCredentials(t *testing.T) {
	t.Parallel()
	const clientSecret = "cs-0f9e8d7c6b5a"
	up := newRecorder(t, nil)
	tokens := newTokenEndpoint(t, "agent-1", clientSecret, 3600)
	cfg := "upstream:\n  schemes:\n    oauth: {type: oauth2, client_id: agent-1, env: CLIENT_SECRET, token_url: " + tokens.URL + "/token}\n"
	c, j := authed(t, oauthDoc(tokens.URL+"/token"), cfg, up.URL, map[string]string{"CLIENT_SECRET": clientSecret})

	for range 3 {
		if res := callTool(t, c, "listOrders", `{}`); res.IsError {
			t.Fatal(res.Text)
		}
	}
	if res := callTool(t, c, "createOrder", `{}`); res.IsError {
		t.Fatal(res.Text)
	}
	if got := tokens.scopes(); len(got) != 2 || got[0] != "orders.read" || got[1] != "orders.read orders.write" {
		t.Errorf("tokens asked for scopes %q; want one for orders.read, kept for three calls, and one for both", got)
	}
	reqs := up.requests()
	for i, want := range []string{"Bearer at-1", "Bearer at-1", "Bearer at-1", "Bearer at-2"} {
		if got := reqs[i].Header.Get("Authorization"); got != want {
			t.Errorf("call %d carried %q, want %q", i, got, want)
		}
	}
	for _, r := range append(reqs, tokens.requests()...) {
		for k, v := range r.Header {
			if strings.Contains(strings.Join(v, " "), clientSecret) || r.Target != "/token" && strings.Contains(r.Body, clientSecret) {
				t.Errorf("%s %s carries the client's secret in %s", r.Method, r.Target, k)
			}
		}
	}
	for _, r := range tokens.requests() {
		if strings.Contains(r.Header.Get("Authorization"), "at-") {
			t.Errorf("the token endpoint received an access token: %+v", r)
		}
	}
	noSecretIn(t, j, clientSecret, "at-1", "at-2")
}

// A token that expires within the early expiry is replaced before it
// lapses; a token the upstream echoes is redacted from the result.
func TestOAuth2TokensAreRenewedBeforeTheyExpire(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"seen":%q}`, r.Header.Get("Authorization"))
	})
	tokens := newTokenEndpoint(t, "agent-1", "cs-1", 20) // 20 s left: inside the 30 s margin
	cfg := "upstream:\n  schemes:\n    oauth: {type: oauth2, client_id: agent-1, env: CS, token_url: " + tokens.URL + "/token}\n"
	c, _ := authed(t, oauthDoc(tokens.URL+"/token"), cfg, up.URL, map[string]string{"CS": "cs-1"})
	for i := range 2 {
		res := callTool(t, c, "listOrders", `{}`)
		if res.IsError || strings.Contains(res.Text, "at-") || !strings.Contains(res.Text, "[redacted]") {
			t.Errorf("call %d: %+v", i, res)
		}
	}
	if got := up.requests()[1].Header.Get("Authorization"); got != "Bearer at-2" || len(tokens.scopes()) != 2 {
		t.Errorf("the second call carried %q after %d tokens; want a new token, at-2", got, len(tokens.scopes()))
	}
}

// The client's secret never goes to a token endpoint that only the
// document names on another origin; the configuration names it, or the
// caller is refused. A refusing token endpoint leaves the call unsent.
func TestOAuth2TokenEndpointIsAnOriginOfItsOwn(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	tokens := newTokenEndpoint(t, "agent-1", "right", 3600)
	doc := oauthDoc(tokens.URL + "/token")
	cfg := "upstream:\n  schemes:\n    oauth: {type: oauth2, client_id: agent-1, env: CS}\n"
	cat, parsed := catalogAndConfig(t, doc, cfg)
	_, err := toolgate.NewCaller(cat, up.URL, parsed.Upstream, func(string) string { return "right" }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "write token_url: "+tokens.URL+"/token in upstream.schemes.oauth") {
		t.Errorf("a document's token endpoint on another origin: %v", err)
	}
	if n := len(tokens.requests()); n != 0 {
		t.Errorf("the token endpoint was asked %d times", n)
	}
	// Named in the configuration, with the wrong secret: refused there,
	// and nothing reaches the upstream.
	cfg = "upstream:\n  schemes:\n    oauth: {type: oauth2, client_id: agent-1, env: CS, token_url: " + tokens.URL + "/token}\n"
	c, j := authed(t, doc, cfg, up.URL, map[string]string{"CS": "wrong-secret"})
	res := callTool(t, c, "createOrder", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "refused the client credentials of agent-1: 401 Unauthorized (invalid_client)") ||
		!strings.Contains(res.Text, "Nothing was sent") || strings.Contains(res.Text, "wrong-secret") {
		t.Errorf("a refused token: %s", res.Text)
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
	if ops, _ := j.List(context.Background(), journal.Filter{Kind: toolgate.JournalKind}); len(ops) != 0 {
		t.Errorf("a call without its token was journaled: %+v", ops)
	}
}

// A document whose operations require a scheme with nothing configured
// is refused by serve, which names the scheme and what to write.
func TestMissingCredentialsAreNamed(t *testing.T) {
	t.Parallel()
	cat, _ := catalogAndConfig(t, testspecs.Corpus(t, "oai-examples/v2.0_yaml_uber.yaml"), "")
	err := cat.MissingCredentials()
	if err == nil || !strings.Contains(err.Error(), "apikey (an API key in the query parameter server_token), for 1 exposed tool (get_products)") ||
		!strings.Contains(err.Error(), "      apikey: {type: api_key, env: APIKEY_KEY}") {
		t.Errorf("Uber without a key: %v", err)
	}
	if row := inspectRow(t, cat, "get_products"); row.Auth != "MISSING: apikey" || len(row.AuthMissing) != 1 {
		t.Errorf("inspect's row: %+v", row)
	}
	for _, cfg := range []string{"upstream:\n  schemes:\n    apikey: {type: none}\n", "upstream:\n  auth: {type: none}\n"} {
		if cat, _ := catalogAndConfig(t, testspecs.Corpus(t, "oai-examples/v2.0_yaml_uber.yaml"), cfg); cat.MissingCredentials() != nil {
			t.Errorf("%q: %v", cfg, cat.MissingCredentials())
		}
	}
	// A credential of the wrong kind for its scheme is a mistake.
	doc, _ := spec.Load(testspecs.Corpus(t, "oai-examples/v2.0_yaml_uber.yaml"))
	for cfg, want := range map[string]string{
		"upstream:\n  schemes:\n    apikey: {type: bearer, env: T}\n": "upstream.schemes.apikey is type bearer, but the document's apikey is an API key in the query parameter server_token: give {type: api_key",
		"upstream:\n  schemes:\n    other: {type: bearer, env: T}\n":  "upstream.schemes.other, a scheme the document does not declare (it declares apikey)",
	} {
		parsed, err := config.Parse([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toolgate.Build(doc, parsed); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", cfg, err)
		}
	}
}

// bearerClient is an HTTP client that presents token as a bearer token.
type bearerClient struct{ token string }

func (b bearerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// httpGate serves cat's tools through caller over Streamable HTTP on
// loopback, with opts, and returns its URL.
func httpGate(t *testing.T, cat *toolgate.Catalog, caller *toolgate.Caller, opts toolgate.HTTPOptions) string {
	t.Helper()
	srv, err := toolgate.NewServer(cat, caller)
	if err != nil {
		t.Fatal(err)
	}
	h, err := toolgate.HTTPHandler(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// callOverHTTP calls the tool name at the gate, presenting token, and
// returns the result's text.
func callOverHTTP(t *testing.T, gateURL, token, name string) string {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gateURL, HTTPClient: &http.Client{Transport: bearerClient{token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return text(res)
}

// Over Streamable HTTP, each MCP client's own bearer token goes to the
// upstream only where the configuration says to forward it; otherwise the
// upstream receives the configured credential and never the client's.
func TestClientTokensAreForwardedOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"seen":%q}`, r.Header.Get("Authorization"))
	})
	cat, cfg := catalogAndConfig(t, apiKeys, "upstream:\n  schemes:\n    bearer: {type: forward}\n")
	c, _ := callerOf(t, cat, up.URL, cfg.Upstream, nil)
	gate := httpGate(t, cat, c.Caller, toolgate.HTTPOptions{ForwardClientToken: true})
	for _, token := range []string{"alice-token-1", "bob-token-22"} {
		if got := callOverHTTP(t, gate, token, "either"); strings.Contains(got, token) || !strings.Contains(got, "[redacted]") {
			t.Errorf("%s's call answered %q; want the echoed token redacted", token, got)
		}
	}
	reqs := up.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer alice-token-1" || reqs[1].Header.Get("Authorization") != "Bearer bob-token-22" {
		t.Errorf("the upstream received %+v", reqs)
	}
	resp, err := http.Post(gate, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("a request without a token: %s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	if _, err := toolgate.HTTPHandler(nil, toolgate.HTTPOptions{Token: strings.Repeat("t", 20), ForwardClientToken: true}); err == nil {
		t.Error("a server token and forwarding were both accepted")
	}

	// Not configured to forward: the configured token goes, the client's never.
	up2 := newRecorder(t, nil)
	cat, cfg = catalogAndConfig(t, apiKeys, "upstream:\n  schemes:\n    bearer: {type: bearer, env: TOKEN}\n")
	c, _ = callerOf(t, cat, up2.URL, cfg.Upstream, func(string) string { return "configured-tok" })
	gate = httpGate(t, cat, c.Caller, toolgate.HTTPOptions{})
	callOverHTTP(t, gate, "alice-token-1", "either")
	if got := up2.only(t).Header.Get("Authorization"); got != "Bearer configured-tok" {
		t.Errorf("without forwarding, the upstream received %q", got)
	}
}

// A parameter named token in the path names a resource (Stripe's
// /v1/tokens/{token}), not a credential: it stays an argument.
func TestATokenInThePathIsAnArgument(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	c, _ := authed(t, testspecs.Corpus(t, "stripe-spec3-2022.json"), "upstream:\n  schemes:\n    bearerAuth: {type: bearer, env: STRIPE_KEY}\n",
		up.URL, map[string]string{"STRIPE_KEY": "sk_test_1"})
	if res := anyTool(t, c, "GetTokensToken", `{"token":"tok_1"}`); res.IsError {
		t.Fatal(res.Text)
	}
	if got := up.only(t); got.Target != "/v1/tokens/tok_1" || got.Header.Get("Authorization") != "Bearer sk_test_1" {
		t.Errorf("sent %s with Authorization %q", got.Target, got.Header.Get("Authorization"))
	}
}

// asker accepts every call, and keeps what it was asked.
type asker struct{ asked []toolgate.Question }

func (a *asker) Confirm(_ context.Context, q toolgate.Question) toolgate.Answer {
	a.asked = append(a.asked, q)
	return toolgate.Answer{Action: toolgate.Accepted}
}

// A person confirming a call sees where each credential goes, never its
// value; upstream.auth places an API key where it says, for a document
// that declares no scheme.
func TestAPersonSeesWhereTheCredentialsGoNotThem(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	cfg := "upstream:\n  schemes:\n    inQuery: {type: api_key, env: KEY_Q}\ntools:\n  query: {expose: confirm}\n"
	c, _ := authed(t, apiKeys, cfg, up.URL, map[string]string{"KEY_Q": "qk-secret-1"})
	p := &asker{}
	if res := c.Call(context.Background(), c.cat.Lookup("query"), json.RawMessage(`{"q":"x"}`), p); res.IsError {
		t.Fatal(res.Text)
	}
	if len(p.asked) != 1 || strings.Contains(p.asked[0].Message, "qk-secret-1") ||
		!strings.Contains(p.asked[0].Message, "GET "+up.URL+"/v1/query?q=x\n") ||
		!strings.Contains(p.asked[0].Message, "[the API's credentials in the query parameter api_key (inQuery), added as it is sent; not shown]") {
		t.Errorf("the question: %+v", p.asked)
	}
	if got := up.only(t).Target; got != "/v1/query?q=x&api_key=qk-secret-1" {
		t.Errorf("sent %s", got)
	}

	// A credential the form carries is in the request the person is
	// shown, redacted, and sent.
	const token = "xoxb-1-slack-secret"
	up3 := newRecorder(t, nil)
	c, _ = authed(t, testspecs.Corpus(t, "slack-v2.json"), "upstream:\n  schemes:\n    slackAuth: {type: bearer, env: SLACK_TOKEN}\ntools:\n  files_upload: {expose: confirm}\n",
		up3.URL, map[string]string{"SLACK_TOKEN": token})
	p = &asker{}
	if res := c.Call(context.Background(), c.cat.Lookup("files_upload"), json.RawMessage(`{"body":{"channels":"C1","content":"hi"}}`), p); res.IsError {
		t.Fatal(res.Text)
	}
	if len(p.asked) != 1 || strings.Contains(fmt.Sprintf("%+v", p.asked[0]), token) || p.asked[0].Request.Body != "channels=C1&content=hi&token=[redacted]" {
		t.Errorf("the question about a form with a credential: %+v", p.asked)
	}
	if got := up3.only(t).Body; got != "channels=C1&content=hi&token="+token {
		t.Errorf("sent the form %q", got)
	}

	plain := "openapi: 3.0.3\ninfo: {title: Plain, version: \"1\"}\npaths:\n  /a:\n    get: {operationId: a, responses: {\"200\": {description: ok}}}\n"
	up2 := newRecorder(t, nil)
	c, _ = authed(t, plain, "upstream:\n  auth: {type: api_key, in: cookie, name: sid, env: SID}\n", up2.URL, map[string]string{"SID": "s-9"})
	callTool(t, c, "a", `{}`)
	if got := up2.only(t).Header.Get("Cookie"); got != "sid=s-9" {
		t.Errorf("Cookie %q", got)
	}
}
