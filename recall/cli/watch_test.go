package cli_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestTwoWatchesOfOneFolder starts two `recall-archive watch` processes
// on one folder and one archive, copies a recording into it slowly (its
// second half after a pause shorter than --settle) and another at once,
// and checks that each recording was added whole and paid for once; a
// watch started again afterwards pays for nothing more.
func TestTwoWatchesOfOneFolder(t *testing.T) {
	testkit.Long(t)
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	src := t.TempDir()
	testkit.Tone(t, filepath.Join(src, "slow.mp3"), 330, 3*time.Second)
	testkit.Tone(t, filepath.Join(src, "quick.mp3"), 550, 2*time.Second)
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	watched := t.TempDir()
	db := filepath.Join(t.TempDir(), "w.db")
	cache := t.TempDir()
	start := func() (*exec.Cmd, *bytes.Buffer) {
		var out bytes.Buffer
		cmd := exec.Command(bin, "--db", db, "watch", watched, "--batch", "w", "--provider-url", srv.URL,
			"--settle", "1500ms", "--interval", "200ms", "--timeout", "10s")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	stop := func(cmd *exec.Cmd, out *bytes.Buffer) {
		t.Helper()
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if code := exitCode(err); code != 130 && code != 0 {
				t.Errorf("watch exited %d after Ctrl-C, want 130:\n%s", code, out)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("watch did not end after Ctrl-C:\n%s", out)
		}
	}
	w1, out1 := start()
	w2, out2 := start()

	slow, err := os.ReadFile(filepath.Join(src, "slow.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(watched, "slow.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(slow[:len(slow)/2])
	time.Sleep(700 * time.Millisecond)
	f.Write(slow[len(slow)/2:])
	f.Close()
	quick, _ := os.ReadFile(filepath.Join(src, "quick.mp3"))
	if err := os.WriteFile(filepath.Join(watched, "quick.mp3"), quick, 0o644); err != nil {
		t.Fatal(err)
	}

	status := func() recall.Status {
		t.Helper()
		a, err := recall.Open(context.Background(), db, recall.Options{ReadOnly: true})
		if err != nil {
			return recall.Status{}
		}
		defer a.Close()
		st, _ := a.Status(context.Background(), "w")
		return st
	}
	deadline := time.Now().Add(90 * time.Second)
	for status().Transcription["done"] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the recordings were not transcribed: %+v\nfirst watch:\n%s\nsecond watch:\n%s", status(), out1, out2)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop(w1, out1)
	stop(w2, out2)
	st := status()
	if st.Contents != 2 {
		t.Errorf("the batch holds %d contents, want the 2 recordings whole (a partial copy would be a third): %+v", st.Contents, st)
	}
	if n := len(sb.Charges()); n != 2 {
		t.Errorf("the sandbox charged %d times for 2 recordings:\nfirst watch:\n%s\nsecond watch:\n%s", n, out1, out2)
	}

	// Started again, a watch finds nothing to do and pays for nothing.
	w3, out3 := start()
	time.Sleep(3 * time.Second)
	stop(w3, out3)
	if n := len(sb.Charges()); n != 2 {
		t.Errorf("after a restart the sandbox charged %d times for 2 recordings:\n%s", n, out3)
	}
}

// TestWatchUsage: a watch needs its batch and a folder that exists, and
// says so in terms of its flags.
func TestWatchUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.mp3")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", dir}, "--batch BATCH"},
		{[]string{"watch", filepath.Join(dir, "gone"), "--batch", "b"}, "is not a folder"},
		{[]string{"watch", file, "--batch", "b"}, "is not a folder"},
		{[]string{"watch", dir, "--batch", "b", "--settle", "0"}, "--settle and --interval"},
	} {
		r := run(t, map[string]string{"RECALL_DB": filepath.Join(dir, "r.db")}, c.args...)
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, cli.ExitUsage, c.want)
		}
	}
}

// TestSubtitleFlagsAreChecked: rules no viewer could read are refused by
// every command that writes subtitles, naming the flags.
func TestSubtitleFlagsAreChecked(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "r.db")
	for _, args := range [][]string{
		{"export", "b", "--out", t.TempDir(), "--line-chars", "3"},
		{"run", "b", "--lines", "0"},
		{"export", "b", "--out", t.TempDir(), "--reading-speed", "0"},
	} {
		r := run(t, map[string]string{"RECALL_DB": db}, args...)
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--line-chars, --lines") {
			t.Errorf("%q: exit %d, %q; want %d naming the subtitle flags", args, r.code, r.stderr, cli.ExitUsage)
		}
	}
}
