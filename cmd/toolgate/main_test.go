package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/internal/testkit"
)

func TestMain(m *testing.M) {
	if os.Getenv(noopServerEnv) != "" {
		noopServer()
		return
	}
	testkit.Main(m)
}

// binary is the real command, which the tests run, built once.
func binary(tb testing.TB) string {
	tb.Helper()
	return testkit.Binary(tb, "cmd/toolgate")
}

const shopSpec = "../../examples/shop/openapi.yaml"

// noCredentials is a configuration that sends no credentials: the tests'
// upstreams check none, whatever a document's schemes ask for.
const noCredentials = "testdata/no-credentials.yaml"

// modes are the two ways toolgate serve presents the tools. The cases
// that call tools through a real client run in both: a call through
// search mode must meet everything a call of a listed tool meets.
var modes = []string{"tools", "search"}

// inModes runs test once per mode, as a subtest named after it.
func inModes(t *testing.T, test func(t *testing.T, mode string)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m, func(t *testing.T) { test(t, m) })
	}
}

// modeEnv tells the Node scripts of testdata the mode the server is in.
func modeEnv(mode string, env []string) []string {
	return append([]string{"TOOLGATE_MODE=" + mode}, env...)
}

// callParams returns the parameters of a call of the tool name with
// args, as an agent makes it in mode: by the tool's name, or through
// call_operation.
func callParams(mode, name string, args map[string]any) *mcp.CallToolParams {
	if mode == "search" {
		return &mcp.CallToolParams{Name: "call_operation", Arguments: map[string]any{"name": name, "arguments": args}}
	}
	return &mcp.CallToolParams{Name: name, Arguments: args}
}

// upstream serves the example API on loopback. Placing an order for SKU
// B7 applies it and then drops the connection unanswered.
func upstream(t testing.TB) (*shopapi.API, string) {
	t.Helper()
	api := shopapi.New()
	return api, loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == "POST" && bytes.Contains(body, []byte(`"B7"`)) {
			api.LoseAnswers(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		api.ServeHTTP(w, r)
	}))
}

// loopback serves h on a loopback port until the test ends, and returns
// its base URL.
func loopback(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// serveHTTP starts toolgate serve --http and returns its endpoint.
func serveHTTP(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", shopSpec, "--config", noCredentials}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("toolgate serve did not stop within 10 s of an interrupt")
		}
	})
	lines := bufio.NewScanner(stderr)
	at := regexp.MustCompile(`at (http://\S+/) `)
	for lines.Scan() {
		if m := at.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
		t.Log(lines.Text())
	}
	t.Fatal("toolgate serve exited before listening")
	return ""
}

// session is what the TypeScript client reports.
type session struct {
	Server struct{ Name string }
	// Listed is what tools/list gave, in search mode.
	Listed []string
	Tools  []struct {
		Name        string
		Annotations struct {
			ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
		}
		HasOutputSchema bool
	}
	Calls map[string]struct {
		IsError       bool
		Text          string
		Structured    map[string]any
		ProtocolError string
	}
}

// checkSession checks what any client must see of the example API.
func checkSession(t *testing.T, s session, api *shopapi.API) {
	t.Helper()
	if s.Server.Name != "toolgate" {
		t.Errorf("server name %q", s.Server.Name)
	}
	if s.Listed != nil && strings.Join(s.Listed, " ") != "search_operations describe_operation call_operation" {
		t.Errorf("search mode lists %v", s.Listed)
	}
	names := map[string]bool{}
	for _, tl := range s.Tools {
		names[tl.Name] = true
		a := tl.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all set: %+v", tl.Name, a)
			continue
		}
		if *a.DestructiveHint {
			t.Errorf("%s is listed as destructive; none should be exposed", tl.Name)
		}
		if tl.Name == "createOrder" && (*a.ReadOnlyHint || *a.IdempotentHint) {
			t.Errorf("createOrder annotations %+v", a)
		}
		if tl.Name == "listOrders" && (!*a.ReadOnlyHint || !*a.IdempotentHint) {
			t.Errorf("listOrders annotations %+v", a)
		}
	}
	for _, want := range []string{"listOrders", "getOrder", "createOrder"} {
		if !names[want] {
			t.Errorf("tool %s not listed: %v", want, names)
		}
	}
	for _, hidden := range []string{"deleteOrder", "refundOrder", "listApiKeys"} {
		if names[hidden] {
			t.Errorf("hidden tool %s is listed", hidden)
		}
	}
	c := s.Calls
	if r := c["create"]; r.IsError || r.Structured["sku"] != "A1" || r.ProtocolError != "" {
		t.Errorf("createOrder: %+v", r)
	}
	if r := c["list"]; r.IsError || !strings.Contains(r.Text, `"orders"`) {
		t.Errorf("listOrders: %+v", r)
	}
	if r := c["invalid"]; !r.IsError || !strings.Contains(r.Text, "Nothing was sent") {
		t.Errorf("invalid arguments: %+v", r)
	}
	if r := c["lost"]; !r.IsError || !strings.Contains(r.Text, "OUTCOME UNKNOWN") || !strings.Contains(r.Text, "Do not call this tool again") {
		t.Errorf("lost answer: %+v", r)
	}
	if r := c["again"]; !r.IsError || !strings.HasPrefix(r.Text, "REFUSED") {
		t.Errorf("identical call after the lost answer: %+v", r)
	}
	if r := c["hidden"]; r.ProtocolError == "" && !r.IsError {
		t.Errorf("hidden tool called by name: %+v", r)
	}
	// One order placed, one placed with its answer lost; the refused
	// call and the invalid one never reached the API.
	if n := api.Effects(); n != 2 {
		t.Errorf("the API applied %d changes, want 2", n)
	}
}

// typescript runs testdata/client.mjs with the TypeScript SDK.
func typescript(t *testing.T, env []string, args ...string) session {
	t.Helper()
	var s session
	out := runScript(t, nodeFor(t, "18", "@modelcontextprotocol/sdk"), "client.mjs", env, args...)
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	return s
}

func TestTypeScriptClientOverStdio(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		db := filepath.Join(t.TempDir(), "journal.db")
		s := typescript(t, modeEnv(mode, nil), "stdio", binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--mode", mode, "--upstream", base, "--db", db)
		checkSession(t, s, api)
		calls := run(t, "calls", "--db", db)
		if !strings.Contains(calls, "createOrder") || !strings.Contains(calls, "ambiguous") || !strings.Contains(calls, `"B7"`) {
			t.Errorf("toolgate calls does not show the lost call:\n%s", calls)
		}
	})
}

func TestTypeScriptClientOverHTTP(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		url := serveHTTP(t, nil, "--http", "127.0.0.1:0", "--mode", mode, "--upstream", base, "--db", filepath.Join(t.TempDir(), "journal.db"))
		checkSession(t, typescript(t, modeEnv(mode, nil), "http", url), api)
	})
}

func TestTypeScriptClientWithToken(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		token := []string{"TOOLGATE_TOKEN=0123456789abcdef0123"}
		url := serveHTTP(t, token, "--http", "127.0.0.1:0", "--mode", mode, "--upstream", base, "--db", filepath.Join(t.TempDir(), "journal.db"))
		checkSession(t, typescript(t, modeEnv(mode, token), "http", url), api)
	})
}

// run runs toolgate and returns its standard output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(binary(t), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("toolgate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func TestGoClientOverStdioAndResolve(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		api, base := upstream(t)
		db := filepath.Join(t.TempDir(), "journal.db")
		ctx := context.Background()
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		connect := func() *mcp.ClientSession {
			cmd := exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--mode", mode, "--upstream", base, "--db", db)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}
		lost := callParams(mode, "createOrder", map[string]any{"body": map[string]any{"sku": "B7", "quantity": 1}})
		cs := connect()
		res, err := cs.CallTool(ctx, lost)
		if err != nil || !res.IsError {
			t.Fatalf("lost answer: %v %+v", err, res)
		}
		cs.Close()

		// The refusal outlives the process: the journal keeps it.
		cs = connect()
		defer cs.Close()
		res, err = cs.CallTool(ctx, lost)
		if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "REFUSED") {
			t.Fatalf("identical call in a new process: %v %+v", err, res)
		}
		key := regexp.MustCompile(`toolgate/createOrder/\S+`).FindString(run(t, "calls", "--db", db))
		if key == "" {
			t.Fatal("toolgate calls lists no key")
		}
		// Not applied waits for the lease the call was sent under, and says
		// so; the order is in the list: applied.
		early := exec.Command(binary(t), "resolve", key, "--not-applied", "--note", "not in the order list", "--by", "test", "--db", db)
		if out, err := early.CombinedOutput(); err == nil || !strings.Contains(string(out), "resolve it as not applied after then") {
			t.Errorf("resolve --not-applied within the call's lease: %v\n%s", err, out)
		}
		// The command the refusal suggests works as pasted into a shell.
		pasted := regexp.MustCompile(`(?m)^\s*(toolgate resolve .* --applied .*)$`).FindStringSubmatch(res.Content[0].(*mcp.TextContent).Text)
		if pasted == nil {
			t.Fatalf("the refusal suggests no resolve --applied command:\n%s", res.Content[0].(*mcp.TextContent).Text)
		}
		calls := run(t, "calls", "--json", "--db", db)
		schematest.Check(t, "toolgate/calls.json", []byte(calls))
		if !strings.Contains(calls, `"arguments": {`) || strings.Contains(calls, "0001-01-01") {
			t.Errorf("calls --json: the arguments are not JSON, or a zero time is printed:\n%s", calls)
		}
		sh := exec.Command("sh", "-c", pasted[1]+" --json")
		sh.Env = append(os.Environ(), "PATH="+filepath.Dir(binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"), "TOOLGATE_DB="+db)
		out, err := sh.Output()
		if err != nil || !strings.Contains(string(out), `"state": "applied"`) {
			t.Errorf("%s, as pasted: %v\n%s", pasted[1], err, out)
		}
		schematest.Check(t, "toolgate/resolve.json", out)
		// Settled as applied, the same call is that call re-issued: it is
		// answered from the journal, and nothing is sent.
		lostOnce := api.Effects()
		res, err = cs.CallTool(ctx, lost)
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "REPLAYED") ||
			!strings.Contains(res.Content[0].(*mcp.TextContent).Text, "settled it as applied: what was checked") || api.Effects() != lostOnce {
			t.Errorf("call after resolving: %v %+v (effects %d → %d)", err, res, lostOnce, api.Effects())
		}
		// Asked for on purpose, the same call goes again.
		lost.Meta = mcp.Meta{"toolgate/again": true}
		res, err = cs.CallTool(ctx, lost)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "OUTCOME UNKNOWN") || api.Effects() != lostOnce+1 {
			t.Errorf("call sent again on purpose after resolving: %v %+v (effects %d → %d)", err, res, lostOnce, api.Effects())
		}
	})
}

func TestHTTPRefusesForeignOriginsAndMissingTokens(t *testing.T) {
	t.Parallel()
	_, base := upstream(t)
	token := "0123456789abcdef0123"
	url := serveHTTP(t, []string{"TOOLGATE_TOKEN=" + token}, "--http", "127.0.0.1:0", "--upstream", base,
		"--db", filepath.Join(t.TempDir(), "journal.db"), "--allow-origin", "https://console.example")
	self := strings.TrimSuffix(url, "/")
	bearer := "Bearer " + token
	for _, c := range []struct {
		name      string
		header    map[string]string
		want      int
		challenge string // the WWW-Authenticate header expected
		says      string // in the body
	}{
		{name: "token", header: map[string]string{"Authorization": bearer}, want: 200},
		{name: "no token", want: 401, challenge: `Bearer realm="toolgate"`, says: "Authorization: Bearer"},
		{name: "wrong token", header: map[string]string{"Authorization": "Bearer 0123456789abcdef0124"}, want: 401,
			challenge: `Bearer realm="toolgate", error="invalid_token"`, says: "not the one"},
		{name: "basic credentials", header: map[string]string{"Authorization": "Basic dTpw"}, want: 401, challenge: `Bearer realm="toolgate"`},
		{name: "foreign origin", header: map[string]string{"Authorization": bearer, "Origin": "https://evil.example"}, want: 403,
			says: "--allow-origin https://evil.example"},
		{name: "opaque origin", header: map[string]string{"Authorization": bearer, "Origin": "null"}, want: 403, says: "opaque origin"},
		{name: "allowed origin", header: map[string]string{"Authorization": bearer, "Origin": "https://console.example"}, want: 200},
		{name: "own origin", header: map[string]string{"Authorization": bearer, "Origin": self}, want: 200},
		{name: "own origin by name", header: map[string]string{"Authorization": bearer, "Origin": strings.Replace(self, "127.0.0.1", "localhost", 1),
			"Host": strings.TrimPrefix(strings.Replace(self, "127.0.0.1", "localhost", 1), "http://")}, want: 200},
		{name: "another port on loopback", header: map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:1"}, want: 403},
		{name: "rebound host", header: map[string]string{"Authorization": bearer, "Host": "evil.example"}, want: 403},
		{name: "rebound host and origin", header: map[string]string{"Authorization": bearer, "Host": "evil.example", "Origin": "http://evil.example"}, want: 403},
	} {
		resp, body := postInitialize(t, url, c.header)
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d: %s", c.name, resp.StatusCode, c.want, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, c.challenge) || (c.challenge == "") != (got == "") {
			t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, got, c.challenge)
		}
		if !strings.Contains(body, c.says) {
			t.Errorf("%s: the answer %q does not say %q", c.name, body, c.says)
		}
	}
}

// postInitialize posts an initialize request with the given headers.
func postInitialize(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp, string(body)
}

func TestAllowOriginRefusesWhatCannotBeAllowed(t *testing.T) {
	t.Parallel()
	for origin, says := range map[string]string{
		"null":                    "every local file, sandboxed frame and redirected request",
		"*":                       "name each origin",
		"https://app.example/x/y": "give a scheme and a host, and nothing more",
	} {
		cmd := exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--http", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1",
			"--db", filepath.Join(t.TempDir(), "j.db"), "--allow-origin", origin)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), says) {
			t.Errorf("--allow-origin %s: exit %d, %s", origin, code, out)
		}
	}
}

func TestHTTPBeyondLoopbackNeedsAToken(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--http", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "j.db"))
	cmd.Env = append(os.Environ(), "TOOLGATE_TOKEN=")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), "TOOLGATE_TOKEN") {
		t.Errorf("exit %d: %s", code, out)
	}
	cmd = exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--http", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "j.db"))
	cmd.Env = append(os.Environ(), "TOOLGATE_TOKEN=short")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "shorter than 16") || strings.Contains(string(out), "short\n") {
		t.Errorf("a short token: %s", out)
	}
}
