//go:build unix

package doccheck

import (
	"os"
	"syscall"
)

// lock holds an exclusive lock on the file at path until the returned
// function is called.
func lock(path string) (func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
