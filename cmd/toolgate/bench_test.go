package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

	"time"

	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// listing is what a client gets from a new toolgate serve --stdio
// process's tools/list, every page followed.
type listing struct {
	// first and all are the times from process start to the answer of
	// the first page and of the last.
	first, all   time.Duration
	tools, pages int
	// bytes is the size of all the pages, largestPage and largestTool
	// the sizes of the largest page and of the largest tool in it.
	bytes, largestPage, largestTool int
	peak                            int64 // the process's peak resident memory, in bytes
	// cpu is the process's CPU time, user and system, from start to
	// exit: unlike the times above, it does not grow when other
	// processes share the cores.
	cpu time.Duration
}

// firstList starts toolgate serve --stdio on spec, initializes a session,
// and lists the tools, following the cursors to the last page.
func firstList(tb testing.TB, spec, db string) listing {
	return firstListOf(tb, exec.Command(binary(tb), "serve", spec, "--config", noCredentials, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", db))
}

// firstListOf is firstList for any MCP server over stdio started by cmd.
func firstListOf(tb testing.TB, cmd *exec.Cmd) listing {
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
	var l listing
	for id := 2; ; {
		line, err := r.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
		}
		if !answers(line, id) {
			continue
		}
		l.all = time.Since(start)
		if l.first == 0 {
			l.first = l.all
		}
		var res struct {
			Result struct {
				Tools      []json.RawMessage
				NextCursor string
			}
		}
		if err := json.Unmarshal(line, &res); err != nil || len(res.Result.Tools) == 0 {
			tb.Fatalf("tools/list answer %.200q: %v", line, err)
		}
		l.tools += len(res.Result.Tools)
		l.pages++
		l.bytes += len(line)
		l.largestPage = max(l.largestPage, len(line))
		for _, t := range res.Result.Tools {
			l.largestTool = max(l.largestTool, len(t))
		}
		if res.Result.NextCursor == "" {
			break
		}
		id++
		cursor, _ := json.Marshal(res.Result.NextCursor)
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":%s}}`+"\n", id, cursor)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil && !isSignal(err) {
		tb.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
	}
	l.peak = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	l.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return l
}

// answers reports whether a JSON-RPC message line is the answer to the
// request with that id, wherever the message writes its id.
func answers(line []byte, id int) bool {
	line = bytes.TrimSpace(line)
	head, tail := line[:min(len(line), 40)], line[max(0, len(line)-40):]
	return bytes.Contains(head, fmt.Appendf(nil, `"id":%d,`, id)) || bytes.HasSuffix(tail, fmt.Appendf(nil, `"id":%d}`, id))
}

// isSignal reports whether err says the process ended on a signal, as
// some servers do when their standard input closes.
func isSignal(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && !exit.Exited()
}

// peerPackage is the Node OpenAPI-to-MCP server the cold start is
// compared with; `make bench-toolgate` installs it into .cache/npm.
const peerPackage = "@ivotoby/openapi-mcp-server"

// BenchmarkColdStart measures from process start to the answer of the
// first tools/list page over stdio (first-list-ms, the mean) and of the
// last (all-pages-ms; ns/op runs to the process's exit), and reports the
// process's CPU time (cpu-ms, the mean) and peak resident memory and what was listed: the tools, the
// pages, their size in all (and in tokens, a token per 4 bytes), the
// largest page and the largest tool. The example shop's seven
// operations are the baseline: what starting the process and a session
// costs whatever the document. Kubernetes' and Stripe's documents are
// the corpus's; GitHub's is $TOOLGATE_GITHUB_SPEC. Each of the three is
// served in tools mode and in search mode. Kubernetes' document is also
// served by a Node peer (peerPackage), in the same run.
func BenchmarkColdStart(b *testing.B) {
	k8s := testspecs.Corpus(b, "k8s-swagger.json")
	for _, c := range []struct {
		name string
		cmd  func(b *testing.B, db string) *exec.Cmd
	}{
		{"shop", toolgateServe(shopSpec, "tools")},
		{"github", toolgateServe(testspecs.GitHub(b), "tools")},
		{"github-search", toolgateServe(testspecs.GitHub(b), "search")},
		{"kubernetes", toolgateServe(k8s, "tools")},
		{"kubernetes-search", toolgateServe(k8s, "search")},
		{"kubernetes-node-peer", func(b *testing.B, _ string) *exec.Cmd {
			env := nodeFor(b, "20", peerPackage)
			return exec.Command(env.node, filepath.Join(env.modules, peerPackage, "bin", "mcp-server.js"),
				"--transport", "stdio", "--openapi-spec", k8s, "--api-base-url", "http://127.0.0.1:1")
		}},
		{"stripe", toolgateServe(testspecs.Corpus(b, "stripe-spec3-2022.json"), "tools")},
		{"stripe-search", toolgateServe(testspecs.Corpus(b, "stripe-spec3-2022.json"), "search")},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "journal.db")
			var l listing
			var peak int64
			var first, all, cpu time.Duration
			n := 0
			for b.Loop() {
				l = firstListOf(b, c.cmd(b, db))
				peak = max(peak, l.peak)
				first += l.first
				all += l.all
				cpu += l.cpu
				n++
			}
			b.ReportMetric(float64(first.Microseconds())/1e3/float64(n), "first-list-ms")
			b.ReportMetric(float64(all.Microseconds())/1e3/float64(n), "all-pages-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(n), "cpu-ms")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(float64(l.tools), "tools")
			b.ReportMetric(float64(l.pages), "pages")
			b.ReportMetric(float64(l.bytes)/1e3, "list-KB")
			b.ReportMetric(float64(l.bytes/4), "list-tokens")
			b.ReportMetric(float64(l.largestPage)/1e3, "page-max-KB")
			b.ReportMetric(float64(l.largestTool)/1e3, "tool-max-KB")
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
	cmd := exec.Command(binary(tb), "serve", spec, "--config", noCredentials, "--stdio", "--mode", "search", "--upstream", "http://127.0.0.1:1", "--db", db)
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

// toolgateServe returns the command that serves spec over stdio in mode.
func toolgateServe(spec, mode string) func(*testing.B, string) *exec.Cmd {
	return func(b *testing.B, db string) *exec.Cmd {
		return exec.Command(binary(b), "serve", spec, "--config", noCredentials, "--stdio", "--mode", mode, "--upstream", "http://127.0.0.1:1", "--db", db)
	}
}

func TestColdStartHarness(t *testing.T) {
	t.Parallel()
	l := firstList(t, shopSpec, filepath.Join(t.TempDir(), "journal.db"))
	if l.first <= 0 || l.all < l.first || l.tools != 4 || l.pages != 1 || l.bytes < 1000 || l.largestTool < 100 || l.peak < 1<<20 {
		t.Errorf("%+v", l)
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
	cmd := exec.Command(binary(b), "serve", shopSpec, "--config", noCredentials, "--stdio", "--upstream", base, "--db", filepath.Join(b.TempDir(), "journal.db"))
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
