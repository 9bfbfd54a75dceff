package command

import (
	"errors"
	"fmt"
	"net"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// ListenAddress checks the value of flag (--http, --addr): a port, or
// host:port. A bare port listens on the loopback interface.
func ListenAddress(flag, given string) (string, error) {
	addr := given
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsAny(host, "/ ") {
		return "", fmt.Errorf("%s %s: give a port, such as 8080, or host:port, such as 127.0.0.1:8080", flag, given)
	}
	return addr, nil
}

// ListenError explains why a server could not listen on addr, which flag
// gave.
func ListenError(flag, addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s is already in use by another program: stop it, or give another port with %s", addr, flag)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("listening on %s is not permitted (ports below 1024 need privileges): give another port with %s", addr, flag)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s is not an address of this machine: give one of its addresses, or 127.0.0.1, with %s", addr, flag)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("%s %s: the host %q is not known: give an address, such as 127.0.0.1:8080", flag, addr, dns.Name)
	}
	return fmt.Errorf("cannot listen on %s: %w", addr, err)
}

// User returns who runs the command: $USER, else the system's name for
// the process's user, else "".
func (r *Run) User() string {
	if u := r.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}
