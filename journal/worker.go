package journal

import (
	"crypto/rand"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ProcessWorker names this process as a worker that holds leases:
// "host:pid:random", the random part made once per process start. Host and
// process id alone are not unique: two containers on one host, each in a
// PID namespace of its own, are both "host:1". Every call in a process
// returns the same name, so that an operation's record says which process
// sent it.
func ProcessWorker() string { return processWorker() }

var processWorker = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + strings.ToLower(rand.Text()[:8])
})
