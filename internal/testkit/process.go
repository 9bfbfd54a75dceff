package testkit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// A Process is a real program a test started, its standard output and
// error captured apart.
type Process struct {
	Cmd            *exec.Cmd
	stdout, stderr buffer
	done           chan struct{}
	err            error
}

// Start starts cmd, capturing what it writes unless cmd already sends its
// output elsewhere. When t ends, a process still running is interrupted,
// killed after 10 s, and waited for.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = &p.stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &p.stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Wait waits for the process to end and returns its exit code; it fails t
// if the process could not be waited for or was killed by a signal.
func (p *Process) Wait(t testing.TB) int {
	t.Helper()
	<-p.done
	return exitCode(t, p.Cmd, p.err)
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stdout is what the process has written to its standard output so far.
func (p *Process) Stdout() string { return p.stdout.String() }

// Stderr is what the process has written to its standard error so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Run runs cmd to its end and returns its standard output and error and
// its exit code.
func Run(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	p := Start(t, cmd)
	code = p.Wait(t)
	return p.Stdout(), p.Stderr(), code
}

// exitCode is the code err, cmd's Wait's, carries.
func exitCode(t testing.TB, cmd *exec.Cmd, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	t.Fatalf("%s: %v", cmd.Path, err)
	return -1
}

// buffer is a bytes.Buffer that the process's copying goroutines and the
// test may use at once.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
