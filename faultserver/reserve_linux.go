package faultserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// While a Refuse step closes the listener, a second socket keeps the port
// bound, without listening: connections to it are refused, and no other
// server or outgoing connection on the machine can take the port before
// the server listens on it again. Both sockets set SO_REUSEPORT so that they
// can share the port.

// listenConfig makes listeners that can share their port with a
// reservation.
func listenConfig() *net.ListenConfig {
	return &net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
}

// reservePort binds a socket to addr without listening on it.
func reservePort(addr string) (io.Closer, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("faultserver: reserve %s: want an IPv4 host:port", addr)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("faultserver: reserve %s: %w", addr, err)
	}
	f := os.NewFile(uintptr(fd), "reservation "+addr)
	// SO_REUSEPORT alone: the listener shares the port, while a socket
	// with only SO_REUSEADDR, as net.Listen makes, cannot bind it.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		f.Close()
		return nil, fmt.Errorf("faultserver: reserve %s: %w", addr, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		f.Close()
		return nil, fmt.Errorf("faultserver: reserve %s: %w", addr, err)
	}
	return f, nil
}

func listen(addr string) (net.Listener, error) {
	return listenConfig().Listen(context.Background(), "tcp", addr)
}
