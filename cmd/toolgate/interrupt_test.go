package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// SIGINT or SIGTERM while a large document loads stops toolgate inspect
// and toolgate serve at once, with a message and exit code 130.
func TestInterruptWhileLoading(t *testing.T) {
	t.Parallel()
	// JSON is YAML; a comment first makes toolgate read it as YAML, which
	// takes seconds at this size.
	doc := filepath.Join(t.TempDir(), "large.yaml")
	if err := os.WriteFile(doc, append([]byte("# a large document\n"), testspecs.Nested(testspecs.RefChain, 16<<20, 1000)...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		sig  os.Signal
	}{
		{[]string{"inspect", doc}, os.Interrupt},
		{[]string{"serve", doc, "--config", noCredentials, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "journal.db")}, syscall.SIGTERM},
	} {
		cmd := exec.Command(binary(t), c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe() // kept open: serve must not stop for want of input
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			t.Fatalf("%s ended before it was interrupted: %v\n%s", c.args[0], err, stderr.String())
		case <-time.After(500 * time.Millisecond):
		}
		cmd.Process.Signal(c.sig)
		sent := time.Now()
		select {
		case err = <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s still running 5 s after %v", c.args[0], c.sig)
		}
		stdin.Close()
		var exit *exec.ExitError
		want := "toolgate " + c.args[0] + ": interrupted while loading " + doc
		if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("%s after %v: %v, %q; want exit 130 and %q", c.args[0], c.sig, err, stderr.String(), want)
		}
		t.Logf("%s stopped %v after %v", c.args[0], time.Since(sent).Round(time.Millisecond), c.sig)
	}
}
