package toolgate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// serveStdio runs a session over the given input to its end and returns
// what the server wrote.
func serveStdio(t *testing.T, mode config.Mode, input string, maxBytes int) string {
	t.Helper()
	caller, err := toolgate.NewCaller(shop(t, ""), "http://127.0.0.1:1", config.Upstream{}, func(string) string { return "" }, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, mode, shop(t, ""), caller)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &toolgate.StdioTransport{Reader: strings.NewReader(input), Writer: &out, MaxMessageBytes: maxBytes}
	if err := srv.Run(ctx, tr); err != nil {
		t.Fatalf("the session ended with %v", err)
	}
	return out.String()
}

func TestStdioSkipsAnOversizedMessage(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		huge := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
		out := serveStdio(t, mode, strings.Join([]string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			huge,
			`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		}, "\n"), 1000) // the last line has no newline: the input just ends
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
		}
		var refused, pinged bool
		for _, l := range lines {
			refused = refused || strings.Contains(l, `"id":null`) && strings.Contains(l, "-32600") && strings.Contains(l, "longer than 1000 bytes")
			pinged = pinged || l == `{"jsonrpc":"2.0","id":2,"result":{}}`
		}
		if !refused || !pinged {
			t.Errorf("want the oversized message refused (%v) and the ping after it answered (%v):\n%s", refused, pinged, out)
		}
	})
}

func TestStdioDoesNotAnswerAMalformedResponse(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		// A client's error without an id is a response: answering it could
		// start an exchange of errors without end.
		out := serveStdio(t, mode, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`+"\n"+`{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n", 0)
		if strings.TrimSpace(out) != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Errorf("wrote %s", out)
		}
	})
}

func TestToolsListCacheFieldsFollowTheProtocolVersion(t *testing.T) {
	t.Parallel()
	inModes(t, func(t *testing.T, mode config.Mode) {
		out := serveStdio(t, mode, strings.Join([]string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`,
		}, "\n")+"\n", 0)
		lists := map[string]map[string]any{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				ID     json.RawMessage
				Result map[string]any
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			if r.Result["tools"] != nil {
				lists[string(r.ID)] = r.Result
			}
		}
		if old := lists["2"]; old == nil || old["cacheScope"] != nil || old["ttlMs"] != nil {
			t.Errorf("tools/list under 2025-11-25 has cache fields, which that version does not define: %v", old)
		}
		if current := lists["3"]; current == nil || current["cacheScope"] != "public" || current["ttlMs"] != 0.0 {
			t.Errorf("tools/list under 2026-07-28: cacheScope %v, ttlMs %v; want public and 0:\n%s", current["cacheScope"], current["ttlMs"], out)
		}
	})
}
