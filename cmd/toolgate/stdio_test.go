package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The first messages of every stdio session.
const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// reply is a JSON-RPC response as read off toolgate's standard output.
type reply struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

// replies parses the lines toolgate wrote; every line must be one message.
func replies(t *testing.T, out string) []reply {
	t.Helper()
	var rs []reply
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("toolgate wrote a line that is not JSON: %q", line)
		}
		rs = append(rs, r)
	}
	return rs
}

func byID(rs []reply) map[string]reply {
	m := map[string]reply{}
	for _, r := range rs {
		m[string(r.ID)] = r
	}
	return m
}

func TestStdioAnswersMalformedLinesAndGoesOn(t *testing.T) {
	t.Parallel()
	_, base := upstream(t)
	cmd := exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--upstream", base, "--db", filepath.Join(t.TempDir(), "j.db"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for _, line := range []string{
		"this is not JSON",
		initializeLine,
		initializedLine,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"method":42}`,
		`"just a string"`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		fmt.Fprintln(stdin, line)
	}
	// Nine lines in, eight answers out: the notification has none.
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	var out strings.Builder
	for i := 0; i < 8 && lines.Scan(); i++ {
		out.WriteString(lines.Text() + "\n")
	}
	rs := replies(t, out.String())
	if len(rs) != 8 {
		t.Fatalf("%d answers, want 8:\n%s", len(rs), out.String())
	}
	var nulls []int
	for _, r := range rs {
		if string(r.ID) == "null" && r.Error != nil {
			nulls = append(nulls, r.Error.Code)
		}
	}
	if fmt.Sprint(nulls) != "[-32700 -32600 -32600 -32600]" {
		t.Errorf("errors with a null id: %v, want a parse error then three invalid requests (batch, object id, not an object):\n%s", nulls, out.String())
	}
	got := byID(rs)
	for id, code := range map[string]int{"7": -32600, "8": -32600} {
		if r := got[id]; r.Error == nil || r.Error.Code != code {
			t.Errorf("id %s: %+v, want error %d", id, r, code)
		}
	}
	if r := got["1"]; r.Error != nil || len(r.Result) == 0 {
		t.Errorf("initialize after a malformed line: %+v", r)
	}
	if r := got["2"]; r.Error != nil || !strings.Contains(string(r.Result), "createOrder") {
		t.Errorf("tools/list after malformed lines: %+v", r)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("toolgate serve --stdio at the end of its input: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("toolgate serve --stdio did not exit within 10 s of the end of its input")
	}
}

func TestStdioAnswersEveryRequestReadBeforeTheInputEnds(t *testing.T) {
	t.Parallel()
	_, base := upstream(t)
	db := filepath.Join(t.TempDir(), "j.db")
	input := strings.Join([]string{
		initializeLine,
		initializedLine,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"listOrders","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}, "\n") + "\n"
	const runs = 20
	answered := 0
	for i := range runs {
		cmd := exec.Command(binary(t), "serve", shopSpec, "--config", noCredentials, "--stdio", "--upstream", base, "--db", db)
		cmd.Stdin = strings.NewReader(input) // written at once, then closed
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		got := byID(replies(t, string(out)))
		call, list := got["2"], got["3"]
		if got["1"].Result != nil && call.Result != nil && list.Result != nil &&
			strings.Contains(string(call.Result), "orders") && strings.Contains(string(list.Result), "listOrders") {
			answered++
		} else if answered == i {
			t.Logf("run %d: answers %s", i, out)
		}
	}
	if answered != runs {
		t.Errorf("%d of %d sessions answered every request written before the input ended", answered, runs)
	}
}
