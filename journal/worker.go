package journal

import (
	"os"
	"strconv"
)

// ProcessWorker names this process as a worker that holds leases:
// "host:pid". Each process has its own name, so that an operation's
// record says which process sent it, and no two processes share a lease.
func ProcessWorker() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}
