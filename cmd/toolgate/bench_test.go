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

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"time"
)

// firstList starts toolgate serve --stdio on spec, initializes a session
// and asks for tools/list, and returns the time from process start to the
// answer, the number of tools listed, the size of the answer and the
// process's peak resident memory in bytes.
func firstList(tb testing.TB, spec, db string) (elapsed time.Duration, tools, size int, peak int64) {
	return firstListOf(tb, exec.Command(binary, "serve", spec, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", db))
}

// firstListOf is firstList for any MCP server over stdio started by cmd.
func firstListOf(tb testing.TB, cmd *exec.Cmd) (elapsed time.Duration, tools, size int, peak int64) {
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
			tb.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
		}
		if answersList(line) {
			answer = line
			elapsed = time.Since(start)
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil && !isSignal(err) {
		tb.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
	}
	var res struct {
		Result struct{ Tools []json.RawMessage }
	}
	if err := json.Unmarshal(answer, &res); err != nil || len(res.Result.Tools) == 0 {
		tb.Fatalf("tools/list answer %.200q: %v", answer, err)
	}
	return elapsed, len(res.Result.Tools), len(answer), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// answersList reports whether a JSON-RPC message line is the answer to
// the request with id 2, tools/list, wherever its id is written.
func answersList(line []byte) bool {
	line = bytes.TrimSpace(line)
	head, tail := line[:min(len(line), 40)], line[max(0, len(line)-40):]
	return bytes.Contains(head, []byte(`"id":2,`)) || bytes.HasSuffix(tail, []byte(`"id":2}`))
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
// first tools/list over stdio (first-list-ms, the mean; ns/op runs to the
// process's exit), and reports the process's peak resident memory. The
// example shop's seven operations are the baseline: what starting the
// process and a session costs whatever the document. Kubernetes' document
// is also served by a Node peer (peerPackage), in the same run.
func BenchmarkColdStart(b *testing.B) {
	k8s := testspecs.Corpus(b, "k8s-swagger.json")
	for _, c := range []struct {
		name string
		cmd  func(b *testing.B, db string) *exec.Cmd
	}{
		{"shop", toolgateServe(shopSpec)},
		{"github", toolgateServe(testspecs.GitHub(b))},
		{"kubernetes", toolgateServe(k8s)},
		{"kubernetes-node-peer", func(b *testing.B, _ string) *exec.Cmd {
			env := nodeFor(b, "20", peerPackage)
			return exec.Command(env.node, filepath.Join(env.modules, peerPackage, "bin", "mcp-server.js"),
				"--transport", "stdio", "--openapi-spec", k8s, "--api-base-url", "http://127.0.0.1:1")
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "journal.db")
			var peak int64
			var tools, size, n int
			var total time.Duration
			for b.Loop() {
				var p int64
				var d time.Duration
				d, tools, size, p = firstListOf(b, c.cmd(b, db))
				peak = max(peak, p)
				total += d
				n++
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(n), "first-list-ms")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(float64(tools), "tools")
			b.ReportMetric(float64(size)/(1<<20), "list-MB")
		})
	}
}

// toolgateServe returns the command that serves spec over stdio.
func toolgateServe(spec string) func(*testing.B, string) *exec.Cmd {
	return func(_ *testing.B, db string) *exec.Cmd {
		return exec.Command(binary, "serve", spec, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", db)
	}
}

func TestColdStartHarness(t *testing.T) {
	elapsed, tools, size, peak := firstList(t, shopSpec, filepath.Join(t.TempDir(), "journal.db"))
	if elapsed <= 0 || tools != 4 || size < 1000 || peak < 1<<20 {
		t.Errorf("%v, tools %d, %d bytes, peak %d bytes", elapsed, tools, size, peak)
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
