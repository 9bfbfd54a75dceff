//go:build !linux

package faultserver

import (
	"io"
	"net"
)

// Elsewhere the port is simply released while a Refuse step lasts; another
// socket could take it in that time.

func reservePort(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

// Close does nothing.
func (nopCloser) Close() error { return nil }

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
