package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestHTTPServesMetrics makes calls through toolgate serve --http and
// reads /metrics behind the same token. In search mode the calls count
// for the operation called, not for call_operation.
func TestHTTPServesMetrics(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode string) {
		_, base := upstream(t)
		const token = "0123456789abcdef0123"
		url := serveHTTP(t, []string{"TOOLGATE_TOKEN=" + token}, "--http", "127.0.0.1:0", "--mode", mode, "--upstream", base,
			"--db", filepath.Join(t.TempDir(), "journal.db"))
		ctx := context.Background()
		transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for _, sku := range []string{"A1", "B7"} { // B7's answer is lost
			if _, err := cs.CallTool(ctx, callParams(mode, "createOrder", map[string]any{"body": map[string]any{"sku": sku, "quantity": 1}})); err != nil {
				t.Fatal(err)
			}
		}
		get := func(header map[string]string) (int, string) {
			req, _ := http.NewRequest("GET", strings.TrimSuffix(url, "/")+"/metrics", nil)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		status, body := get(map[string]string{"Authorization": "Bearer " + token})
		for _, want := range []string{
			`toolgate_calls_total{class="write",outcome="applied",tool="createOrder"} 1`,
			`toolgate_calls_total{class="write",outcome="ambiguous",tool="createOrder"} 1`,
			"toolgate_ambiguous_open 1", "go_goroutines ", "process_resident_memory_bytes ", "toolgate_build_info{commit=",
		} {
			if status != 200 || !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q: %d\n%s", want, status, body)
			}
		}
		if status, _ := get(nil); status != 401 {
			t.Errorf("/metrics without the token: %d", status)
		}
		if status, _ := get(map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}); status != 403 {
			t.Errorf("/metrics from another site's page: %d", status)
		}
	})
}
