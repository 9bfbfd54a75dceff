package media

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runTied runs cmd as a child that the kernel kills when this process
// dies, even by SIGKILL. The signal is tied to the thread that starts the
// child, so the child is started, and waited for, on a thread locked for
// the purpose: the runtime cannot end that thread while the child lives.
func runTied(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- cmd.Run()
	}()
	return <-done
}
