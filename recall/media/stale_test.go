package media_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/media"
)

// writerEnv makes the test binary a writer of a proxy (see
// TestStoppedWriterIsNamedAndTakenOver): SRC, DST and FFMPEG, joined by
// newlines.
const writerEnv = "RECALL_MEDIA_TEST_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		parts := strings.Split(spec, "\n")
		err := media.Tools{FFmpeg: parts[2], LockStale: time.Second}.Proxy(context.Background(), parts[0], parts[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStoppedWriterIsNamedAndTakenOver: a writer of a proxy that stops
// (SIGSTOP, as a run suspended with Ctrl-Z) while it holds the proxy's
// lock is waited for with notices that name it and say it is stopped, and,
// once it has shown no sign of life for the lock's bound, its work is
// taken over: the waiting run makes the proxy itself, whole, in a bounded
// time.
func TestStoppedWriterIsNamedAndTakenOver(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("a stopped process is told apart in /proc")
	}
	src := source(t, 2*time.Second)
	dst := filepath.Join(t.TempDir(), "p.mp3")
	slow := filepath.Join(t.TempDir(), "ffmpeg")
	// It marks that it runs: the writer is then past starting it.
	if err := os.WriteFile(slow, []byte("#!/bin/sh\ncase \"$*\" in *-version*) exec ffmpeg \"$@\";; esac\n: > \"$0.started\"\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writer := exec.Command(os.Args[0], "-test.run=^$")
	writer.Env = append(os.Environ(), writerEnv+"="+src+"\n"+dst+"\n"+slow)
	// Its own process group, so that the stop reaches its ffmpeg too.
	writer.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-writer.Process.Pid, syscall.SIGKILL)
		writer.Wait()
	}()
	pid := strconv.Itoa(writer.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(dst + ".lock")
		if _, err := os.Stat(slow + ".started"); err == nil && strings.Contains(string(b), `"pid":`+pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the proxy's lock and started its ffmpeg")
		}
	}
	// Stopped while it starts a process, the writer would wait for the
	// stopped child to exec, in a disk wait, and never show as stopped:
	// it is stopped once its ffmpeg runs.
	if err := syscall.Kill(-writer.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A signal stops its process once the process is scheduled to take
	// it, which on a loaded machine is not at once: wait until it shows.
	for deadline := time.Now().Add(10 * time.Second); !stoppedProcess(writer.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			stat, _ := os.ReadFile("/proc/" + pid + "/stat")
			t.Fatalf("the writer never showed as stopped after SIGSTOP: /proc/%s/stat says %s", pid, stat)
		}
	}

	var mu sync.Mutex
	var notices []string
	ctx := media.WithNotices(context.Background(), func(n string) {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := (media.Tools{LockStale: time.Second}).Proxy(ctx, src, dst); err != nil {
		t.Fatalf("the proxy, while its first writer is stopped: %v", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the stopped writer was taken over after %s, with a bound of 1 s", waited)
	}
	if frames, err := media.ReadFrames(dst); err != nil || frames.Count() == 0 {
		t.Fatalf("the proxy made after the takeover: %d frames, %v", frames.Count(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(notices, "\n")
	if !strings.Contains(all, "waiting for process "+pid) || !strings.Contains(all, "stopped") || !strings.Contains(all, "this run makes it instead") {
		t.Fatalf("the notices %q do not name the stopped writer %s and the takeover", notices, pid)
	}
}

// stoppedProcess reports whether /proc shows process pid stopped.
func stoppedProcess(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'T' || s[i+2] == 't')
}
