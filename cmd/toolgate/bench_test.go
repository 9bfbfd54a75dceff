package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"time"
)

// firstList starts toolgate serve --stdio on spec, initializes a session
// and asks for tools/list, and returns the time from process start to the
// answer, the number of tools listed, the size of the answer and the
// process's peak resident memory in bytes.
func firstList(tb testing.TB, spec, db string) (elapsed time.Duration, tools, size int, peak int64) {
	cmd := exec.Command(binary, "serve", spec, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", db)
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
// process's exit), and reports the process's peak resident memory. The
// example shop's seven operations are the baseline: what starting the
// process and a session costs whatever the document.
func BenchmarkColdStart(b *testing.B) {
	for _, c := range []struct{ name, spec string }{
		{"shop", shopSpec},
		{"github", testspecs.GitHub(b)},
	} {
		b.Run(c.name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "journal.db")
			var peak int64
			var tools, size, n int
			var total time.Duration
			for b.Loop() {
				var p int64
				var d time.Duration
				d, tools, size, p = firstList(b, c.spec, db)
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

func TestColdStartHarness(t *testing.T) {
	elapsed, tools, size, peak := firstList(t, shopSpec, filepath.Join(t.TempDir(), "journal.db"))
	if elapsed <= 0 || tools != 4 || size < 1000 || peak < 1<<20 {
		t.Errorf("%v, tools %d, %d bytes, peak %d bytes", elapsed, tools, size, peak)
	}
}
