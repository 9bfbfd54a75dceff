//go:build linux

package cli_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// ffmpegChildren returns the ffmpeg processes whose parent is pid, and
// whether each is still alive (not a zombie).
func ffmpegChildren(pid int) map[int]bool {
	out := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, ppid, state, ok := procStat(child)
		if ok && name == "ffmpeg" && ppid == pid {
			out[child] = state != "Z"
		}
	}
	return out
}

// procStat reads a process's name, parent and state from /proc.
func procStat(pid int) (name string, ppid int, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, "", false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, "", false
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 2 {
		return "", 0, "", false
	}
	ppid, _ = strconv.Atoi(fields[1])
	return s[open+1 : closing], ppid, fields[0], true
}

// alive reports whether pid is a live process, not a zombie.
func alive(pid int) bool {
	_, _, state, ok := procStat(pid)
	return ok && state != "Z"
}

// TestKilledRunTakesItsChildrenAndItsPartialFiles kills `run` with SIGKILL
// while ffmpeg converts a long recording: ffmpeg dies with it, its partial
// file is left, and the next run removes it before it goes on.
func TestKilledRunTakesItsChildrenAndItsPartialFiles(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	// Ten minutes of plain PCM: quick to write, some seconds to convert.
	testkit.Tone(t, filepath.Join(rec, "long.wav"), 440, 600*time.Second, "-ac", "1", "-ar", "8000")
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	defer sb.Close()
	db := filepath.Join(t.TempDir(), "r.db")
	if out, err := exec.Command(bin, "--db", db, "add", "b", rec).CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	cacheHome := t.TempDir()
	cache := filepath.Join(cacheHome, "recall-archive")
	runCmd := func() *exec.Cmd {
		cmd := exec.Command(bin, "--db", db, "run", "b", "--provider-url", srv.URL, "--workers", "1", "--timeout", "2s", "--lease", "2100ms")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
		return cmd
	}

	first := runCmd()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	var children map[int]bool
	var partials []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		children = ffmpegChildren(first.Process.Pid)
		partials, _ = filepath.Glob(filepath.Join(cache, "*.partial"))
		if len(children) > 0 && len(partials) > 0 {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatal("the run never converted the recording")
		}
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	for pid := range children {
		for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("ffmpeg (pid %d) outlived the run that started it", pid)
			}
		}
	}
	if _, err := os.Stat(partials[0]); err != nil {
		t.Fatalf("the killed run's partial file is gone before the next start: %v", err)
	}

	time.Sleep(2100 * time.Millisecond) // the killed run's claim runs out
	next := runCmd()
	var out strings.Builder
	next.Stdout, next.Stderr = &out, &out
	if err := next.Run(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(partials[0]); !os.IsNotExist(err) {
		t.Fatalf("the next run left the killed run's partial file %s: %v", partials[0], err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "*.partial")); len(left) > 0 {
		t.Fatalf("partial files after the next run: %v", left)
	}
	if n := len(sb.Charges()); n != 1 {
		t.Fatalf("the sandbox charged %d requests for one recording", n)
	}
}
