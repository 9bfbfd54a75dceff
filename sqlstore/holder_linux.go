package sqlstore

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHolder names the process that holds a write lock on the SQLite
// database at path (its file, or the WAL's write lock in its -shm file),
// from /proc/locks: "process 1234 (stopped)". It returns "" when it cannot
// tell.
func lockHolder(path string) string {
	inodes := map[uint64]bool{}
	for _, p := range []string{path, path + "-shm"} {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			inodes[st.Ino] = true
		}
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	me := os.Getpid()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: POSIX  ADVISORY  WRITE 31823 fe:00:9979040 120 120
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1] != "POSIX" || fields[3] != "WRITE" {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid == me {
			continue
		}
		id := strings.Split(fields[5], ":")
		ino, err := strconv.ParseUint(id[len(id)-1], 10, 64)
		if err != nil || !inodes[ino] {
			continue
		}
		who := fmt.Sprintf("process %d", pid)
		if b, err := os.ReadFile("/proc/" + fields[4] + "/stat"); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'T' || s[i+2] == 't') {
				who += " (stopped: it holds the lock until it is continued or ended)"
			}
		}
		return who
	}
	return ""
}
