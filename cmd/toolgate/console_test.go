package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleCommand runs toolgate console as the README does and reads
// its pages and metrics; an interrupt ends it cleanly.
func TestConsoleCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "shop.yaml")
	data, err := os.ReadFile("../../examples/shop/toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(config, data, 0o644)
	cmd := exec.Command(binary(t), "console", shopSpec, "--config", config, "--db", filepath.Join(dir, "journal.db"), "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "USER=ann")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if m := regexp.MustCompile(`the console is at (http://\S+/) \(no token: loopback only\)`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatal("toolgate console exited before listening")
	}
	go io.Copy(io.Discard, stderr)
	for path, want := range map[string]string{
		"tools":     `<tr id="tool-listOrders">`,
		"ambiguous": "No call is ambiguous",
		"metrics":   "toolgate_ambiguous_open 0",
	} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("/%s: %d, no %q", path, resp.StatusCode, want)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("toolgate console ended with %v on an interrupt", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("toolgate console did not stop within 10 s of an interrupt")
	}
}
