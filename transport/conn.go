package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// dialFunc is the shape of http.Transport.DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// countingDial wraps dial so that every connection it makes counts the bytes
// written to it. The count is the proof behind a not_sent phase.
func countingDial(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c}, nil
	}
}

// h2Preface is how the HTTP/2 client preface starts; a connection whose first
// write starts with it carries multiplexed streams.
var h2Preface = []byte("PRI * HTTP/2.0")

// countingConn is a net.Conn that counts the bytes accepted by its Write.
// Only bytes that the operating system accepted are counted, so a count that
// did not move across an attempt proves that the attempt wrote nothing.
type countingConn struct {
	net.Conn
	written atomic.Int64
	h2      atomic.Bool
	// fence, when set, is the deadline of the attempt that got the
	// connection last, checked by the first write after it got it.
	fence atomic.Pointer[time.Time]
}

// errFenced is the write error of an attempt whose deadline passed before
// its first byte was written.
var errFenced = errors.New("the request's deadline passed before its first byte was written; nothing was sent")

// setFence arms the check of the next write against deadline; a zero
// deadline disarms it.
func (c *countingConn) setFence(deadline time.Time) {
	if deadline.IsZero() {
		c.fence.Store(nil)
		return
	}
	c.fence.Store(&deadline)
}

// passedFence reports whether the deadline armed by setFence has passed,
// and disarms it: only the first write of an attempt is checked.
func (c *countingConn) passedFence() bool {
	f := c.fence.Swap(nil)
	return f != nil && !time.Now().Before(*f)
}

// Write writes p and counts what the connection accepted. The first write
// of an attempt whose deadline has passed writes nothing: a process that
// was frozen between taking a connection and writing on it (a stopped
// process, a long pause) must not send a request whose time is over.
func (c *countingConn) Write(p []byte) (int, error) {
	if c.passedFence() {
		return 0, errFenced
	}
	n, err := c.Conn.Write(p)
	if n > 0 && c.written.Add(int64(n)) == int64(n) && bytes.HasPrefix(p, h2Preface) {
		c.h2.Store(true)
	}
	return n, err
}

// ReadFrom keeps the underlying connection's fast path (sendfile, splice,
// or a direct WriteTo from the body) while counting what it wrote.
func (c *countingConn) ReadFrom(r io.Reader) (int64, error) {
	if c.passedFence() {
		return 0, errFenced
	}
	var n int64
	var err error
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{c.Conn}, r)
	}
	c.written.Add(n)
	return n, err
}

// writerOnly hides every method but Write, so that io.Copy cannot recurse
// into ReadFrom.
type writerOnly struct{ io.Writer }

// counterOf finds the countingConn under c, looking through TLS. It returns
// nil when c was not made by a counting dialer.
func counterOf(c net.Conn) *countingConn {
	for range 4 {
		switch v := c.(type) {
		case *countingConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// multiplexed reports whether c carries HTTP/2 streams, where another
// goroutine of net/http may still write a request after RoundTrip returned.
func multiplexed(c net.Conn, counted *countingConn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.ConnectionState().NegotiatedProtocol == "h2"
	}
	return counted != nil && counted.h2.Load()
}
