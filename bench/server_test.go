package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The benchmarks talk to a server in a child process, so that only the
// client's work is measured: -benchmem counts the allocations of the whole
// process, and a server in the same process would add its own.
const serverEnv = "RUBICON_BENCH_SERVER"

// urlEnv, when set, names a server that is already running, so that the
// benchmark starts none (instructions.sh uses it: callgrind trips over the
// signal a child's exit sends).
const urlEnv = "RUBICON_BENCH_URL"

var serverURL string

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		serve()
		return
	}
	if serverURL = os.Getenv(urlEnv); serverURL != "" {
		os.Exit(m.Run())
	}
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// serve answers every request with "ok" after reading its body, until its
// standard input closes.
func serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("http://" + ln.Addr().String())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	}))
}

func startServer() (stop func(), err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the server process: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("read the server's address: %w", err)
	}
	serverURL = strings.TrimSpace(line)
	return func() {
		stdin.Close()
		cmd.Wait()
	}, nil
}
