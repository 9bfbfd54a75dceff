package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"time"
)

// firstList starts toolgate serve --stdio on spec, initializes a session
// and asks for tools/list, and returns the time from process start to the
// answer, the number of tools listed, the size of the answer and the
// process's peak resident memory in bytes.
func firstList(tb testing.TB, spec, mode, db string) (elapsed time.Duration, tools, size int, peak int64) {
	cmd := exec.Command(binary, "serve", spec, "--stdio", "--mode", mode, "--upstream", "http://127.0.0.1:1", "--db", db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	r := bufio.NewReaderSize(stdout, 1<<20)
	var answer []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("toolgate serve: %v\n%s", err, stderr.String())
		}
		if bytes.Contains(line[:min(len(line), 40)], []byte(`"id":2`)) {
			answer = line
			elapsed = time.Since(start)
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("toolgate serve: %v\n%s", err, stderr.String())
	}
	var res struct {
		Result struct{ Tools []json.RawMessage }
	}
	if err := json.Unmarshal(answer, &res); err != nil || len(res.Result.Tools) == 0 {
		tb.Fatalf("tools/list answer %.200q: %v", answer, err)
	}
	return elapsed, len(res.Result.Tools), len(answer), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// BenchmarkColdStart measures from process start to the answer of the
// first tools/list over stdio (first-list-ms, the mean; ns/op runs to the
// process's exit), in each mode, and reports the process's peak resident
// memory and the list's size. The example shop's seven operations in
// tools mode are the baseline: what starting the process and a session
// costs whatever the document.
func BenchmarkColdStart(b *testing.B) {
	for _, c := range []struct{ name, spec, mode string }{
		{"shop/tools", shopSpec, "tools"},
		{"github/tools", testspecs.GitHub(b), "tools"},
		{"github/search", testspecs.GitHub(b), "search"},
		{"kubernetes/tools", testspecs.Corpus(b, "k8s-swagger.json"), "tools"},
		{"kubernetes/search", testspecs.Corpus(b, "k8s-swagger.json"), "search"},
		{"stripe/tools", testspecs.Corpus(b, "stripe-spec3-2022.json"), "tools"},
		{"stripe/search", testspecs.Corpus(b, "stripe-spec3-2022.json"), "search"},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "journal.db")
			var peak int64
			var tools, size, n int
			var total time.Duration
			for b.Loop() {
				var p int64
				var d time.Duration
				d, tools, size, p = firstList(b, c.spec, c.mode, db)
				peak = max(peak, p)
				total += d
				n++
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(n), "first-list-ms")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(float64(tools), "tools")
			b.ReportMetric(float64(size)/(1<<20), "list-MB")
			b.ReportMetric(float64(size)/4, "list-tokens")
		})
	}
}

// BenchmarkFindAndCall measures what an agent spends, in bytes of
// JSON-RPC messages over stdio and in tokens estimated at one per 4
// bytes, to find and call one operation of a large API in search mode:
// the search request and its answer, the describe request for the best
// result and its answer, and the call request; and, for comparison, the
// tools/list it reads in each mode before any of that. Nothing is timed:
// ns/op is the whole session's.
func BenchmarkFindAndCall(b *testing.B) {
	for _, c := range []struct {
		name, spec, query string
		args              map[string]any
	}{
		{"github", testspecs.GitHub(b), "create an issue in repo o/r", map[string]any{"owner": "o", "repo": "r", "body": map[string]any{"title": "Found a bug"}}},
		{"kubernetes", testspecs.Corpus(b, "k8s-swagger.json"), "list the pods in namespace default", map[string]any{"namespace": "default"}},
		{"stripe", testspecs.Corpus(b, "stripe-spec3-2022.json"), "refund charge ch_1", map[string]any{"body": map[string]any{"charge": "ch_1"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "journal.db")
			var f findCost
			for b.Loop() {
				f = findAndCall(b, c.spec, db, c.query, c.args)
			}
			b.ReportMetric(float64(f.search)/4, "search-tokens")
			b.ReportMetric(float64(f.describe)/4, "describe-tokens")
			b.ReportMetric(float64(f.call)/4, "call-tokens")
			b.ReportMetric(float64(f.search+f.describe+f.call)/4, "find-call-tokens")
			b.ReportMetric(float64(f.searchList)/4, "search-list-tokens")
			b.Logf("%s: %q found %s first", c.name, c.query, f.found)
		})
	}
}

// findCost is what finding and calling one operation costs, in bytes.
type findCost struct {
	searchList             int // search mode's tools/list answer
	search, describe, call int // request and answer; describe's; the call's request
	found                  string
}

// findAndCall plays an agent in search mode over stdio: it lists the
// tools, searches for query, describes the best result and calls it with
// args, counting the bytes of each message.
func findAndCall(tb testing.TB, spec, db, query string, args map[string]any) findCost {
	cmd := exec.Command(binary, "serve", spec, "--stdio", "--mode", "search", "--upstream", "http://127.0.0.1:1", "--db", db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	id := 1
	// exchange sends a request and returns its size and the answer.
	exchange := func(method string, params any) (int, []byte) {
		id++
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		req = append(req, '\n')
		stdin.Write(req)
		want := []byte(fmt.Sprintf(`"id":%d`, id))
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				tb.Fatalf("toolgate serve: %v\n%s", err, stderr.String())
			}
			if bytes.Contains(line[:min(len(line), 40)], want) {
				return len(req), line
			}
		}
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	var f findCost
	_, list := exchange("tools/list", map[string]any{})
	f.searchList = len(list)
	n, answer := exchange("tools/call", map[string]any{"name": "search_operations", "arguments": map[string]any{"query": query}})
	f.search = n + len(answer)
	var res struct {
		Result struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(answer, &res); err != nil || len(res.Result.Content) == 0 {
		tb.Fatalf("search_operations answered %.300s", answer)
	}
	lines := strings.Split(res.Result.Content[0].Text, "\n")
	if len(lines) < 2 {
		tb.Fatalf("search_operations found nothing: %s", res.Result.Content[0].Text)
	}
	f.found, _, _ = strings.Cut(lines[1], " ")
	n, answer = exchange("tools/call", map[string]any{"name": "describe_operation", "arguments": map[string]any{"name": f.found}})
	f.describe = n + len(answer)
	n, _ = exchange("tools/call", map[string]any{"name": "call_operation", "arguments": map[string]any{"name": f.found, "arguments": args}})
	f.call = n
	return f
}

func TestColdStartHarness(t *testing.T) {
	elapsed, tools, size, peak := firstList(t, shopSpec, "tools", filepath.Join(t.TempDir(), "journal.db"))
	if elapsed <= 0 || tools != 4 || size < 1000 || peak < 1<<20 {
		t.Errorf("%v, tools %d, %d bytes, peak %d bytes", elapsed, tools, size, peak)
	}
	f := findAndCall(t, shopSpec, filepath.Join(t.TempDir(), "journal.db"), "place an order", map[string]any{"body": map[string]any{"sku": "A1", "quantity": 1}})
	if f.found != "createOrder" || f.search < 200 || f.describe < 200 || f.call < 50 || f.searchList < 1000 {
		t.Errorf("finding and calling createOrder: %+v", f)
	}
}

// noopServerEnv makes the test binary an MCP server over stdio with one
// tool that answers at once: the floor of a tool call through the SDK and
// a pipe, whatever the tool does.
const noopServerEnv = "TOOLGATE_BENCH_NOOP_SERVER"

func noopServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "noop", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "getOrder", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"id":"o1","sku":"A1","quantity":1}`}}}, nil
		})
	s.Run(context.Background(), &mcp.StdioTransport{})
}

// BenchmarkCall measures a tool call through toolgate serve --stdio, from
// the client's request to its result, against the same request made
// directly to the upstream on loopback (the baseline), and a tool that
// does nothing behind the same SDK and pipe (mcp-noop: what any MCP
// server costs). p50-µs is the median of the iterations. A read tool is not journaled; a write tool
// records its call in the SQLite journal, durably, before it is sent.
func BenchmarkCall(b *testing.B) {
	_, base := upstream(b)
	if _, err := http.Post(base+"/orders", "application/json", strings.NewReader(`{"sku":"A1","quantity":1}`)); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cmd := exec.Command(binary, "serve", shopSpec, "--stdio", "--upstream", base, "--db", filepath.Join(b.TempDir(), "journal.db"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	noop := exec.Command(self)
	noop.Env = append(os.Environ(), noopServerEnv+"=1")
	ns, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: noop}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Close()
	client := &http.Client{}
	n := 0
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"direct-GET", func() error {
			return drain(client.Get(base + "/orders/o1"))
		}},
		{"mcp-noop", func() error {
			_, err := ns.CallTool(ctx, &mcp.CallToolParams{Name: "getOrder", Arguments: map[string]any{"id": "o1"}})
			return err
		}},
		{"toolgate-read", func() error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrder", Arguments: map[string]any{"id": "o1"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("getOrder: %v", res.Content[0].(*mcp.TextContent).Text)
			}
			return err
		}},
		{"direct-POST", func() error {
			return drain(client.Post(base+"/orders", "application/json", strings.NewReader(`{"sku":"A1","quantity":1}`)))
		}},
		{"toolgate-write", func() error {
			// Distinct arguments: an identical call in flight would be refused.
			n++
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "createOrder", Arguments: map[string]any{"body": map[string]any{"sku": fmt.Sprint("S", n), "quantity": 1}}})
			if err == nil && res.IsError {
				err = fmt.Errorf("createOrder: %v", res.Content[0].(*mcp.TextContent).Text)
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
		})
	}
}

// drain reads and closes a response's body, as a client that uses the
// answer would.
func drain(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}
