//go:build unix

package media

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// tryLock takes the exclusive lock of the file path, creating it, without
// waiting: ok is false when another writer, in this process or another,
// holds it. The lock goes with the process: a killed writer's lock is
// free at once.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}

// processState says how process pid stands, when it is not running
// normally: "stopped" (by a signal or a debugger), "not running any more";
// "" otherwise, or when it cannot tell.
func processState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return "not running any more"
		}
		return ""
	}
	if err != nil {
		return ""
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	switch s[i+2] {
	case 'T', 't':
		return "stopped"
	case 'Z', 'X':
		return "not running any more"
	}
	return ""
}

// freeSpace returns the bytes free to a user on the disk that holds dir.
func freeSpace(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
