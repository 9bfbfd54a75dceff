package cli_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestConsoleCommand runs recall-archive console as the README does and
// reads its pages and metrics; the end of its context ends it cleanly.
func TestConsoleCommand(t *testing.T) {
	t.Parallel()
	dir, db := t.TempDir(), filepath.Join(t.TempDir(), "r.db")
	recording(t, filepath.Join(dir, "a.mp3"))
	if r := run(t, nil, "--db", db, "add", "tapes", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"console", "--db", db, "--addr", "127.0.0.1:0"},
			cli.Env{Stdout: io.Discard, Stderr: pw, Getenv: func(k string) string { return map[string]string{"USER": "ann"}[k] }})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var url string
	for url == "" && lines.Scan() {
		if m := regexp.MustCompile(`recall-archive: the console is at (http://\S+/) \(no token: loopback only\)`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("recall-archive console ended before listening: exit %d", <-done)
	}
	go io.Copy(io.Discard, pr)
	for path, want := range map[string]string{
		"batches":         `<a href="/batches/tapes">tapes</a>`,
		"batches/tapes":   "1 waiting",
		"ambiguous":       "No request is ambiguous",
		"metrics":         `recall_items{batch="tapes",state="waiting"} 1`,
		"search?q=hello":  "No transcript holds hello.",
		"recordings/none": "The archive has no recording",
	} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("/%s: %d, no %q", path, resp.StatusCode, want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Errorf("recall-archive console ended with %d when its context ended", code)
		}
	case <-time.After(10 * time.Second):
		t.Error("recall-archive console did not stop within 10 s of the end of its context")
	}
}

// TestConsoleCommandErrors: a wrong address is a usage error; beyond
// loopback without a token, a busy port, or an archive that does not
// exist is a failure that says what to do.
func TestConsoleCommandErrors(t *testing.T) {
	t.Parallel()
	dir, db := t.TempDir(), filepath.Join(t.TempDir(), "r.db")
	recording(t, filepath.Join(dir, "a.mp3"))
	run(t, nil, "--db", db, "add", "tapes", dir)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	missing := filepath.Join(t.TempDir(), "typo.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"console", "--db", db, "--addr", "abc"}, cli.ExitUsage,
			"recall-archive console: --addr abc: give a port, such as 8080, or host:port, such as 127.0.0.1:8080"},
		{[]string{"console", "--db", db, "--addr", "0.0.0.0:0"}, cli.ExitFailure,
			"recall-archive console: listening on an address other than loopback requires a bearer token in $RECALL_TOKEN"},
		{[]string{"console", "--db", db, "--addr", busy.Addr().String()}, cli.ExitFailure,
			"recall-archive console: " + busy.Addr().String() + " is already in use by another program: stop it, or give another port with --addr"},
		{[]string{"console", "--db", missing}, cli.ExitFailure,
			"recall-archive console: there is no archive at " + missing + ": give the archive's file with --db (or $RECALL_DB), or make one with recall-archive add"},
		{[]string{"console", "--db", db, "--model", "nope"}, cli.ExitFailure, `no price for sandbox model "nope"`},
	} {
		r := run(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}
