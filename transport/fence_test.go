package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/transport"
)

// byteCounter is a loopback listener that counts every byte its
// connections receive and never answers (it closes each connection after
// a second), so that a test can tell whether any byte of a request left
// the client.
type byteCounter struct {
	ln       net.Listener
	received atomic.Int64
}

func countBytes(t *testing.T) *byteCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &byteCounter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(time.Second))
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					b.received.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return b
}

func (b *byteCounter) url() string { return "http://" + b.ln.Addr().String() }

// TestPauseAfterTheConnectionWritesNothingPastTheDeadline stands for a
// process frozen (a stopped process, a long pause) after it took a
// connection and before it wrote on it: when it wakes after the request's
// deadline, no byte is written and the call is provably not applied.
//
// The context's timer does not fire during the pause: after a stop, the
// woken goroutine may write before the runtime gets to the timer.
func TestPauseAfterTheConnectionWritesNothingPastTheDeadline(t *testing.T) {
	srv := countBytes(t)
	c := newClient(t, transport.Options{}, nil)
	var ctx context.Context = pausedContext{Context: context.Background(), deadline: time.Now().Add(100 * time.Millisecond)}
	frozen := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { time.Sleep(300 * time.Millisecond) }}
	ctx = httptrace.WithClientTrace(ctx, frozen)

	_, err := do(ctx, c, "POST", srv.url()+"/v1/charges", 512)

	time.Sleep(50 * time.Millisecond) // let the server read what may have come
	if n := srv.received.Load(); n != 0 {
		t.Fatalf("the server received %d bytes after the deadline had passed", n)
	}
	var e *rubicon.Error
	if !errors.As(err, &e) || !rubicon.SafeToRetry(err) || e.Phase != rubicon.NotSent {
		t.Fatalf("error %v: want a *rubicon.Error, not sent, safe to retry", err)
	}
}

// pausedContext is a context with a deadline whose timer never fires, as
// a process sees it in the instant it wakes from a pause that outlasted
// the deadline.
type pausedContext struct {
	context.Context
	deadline time.Time
}

func (p pausedContext) Deadline() (time.Time, bool) { return p.deadline, true }

// TestWakingPastTheDeadlineStartsNoAttempt: a call whose deadline passed
// before its timer could fire starts no attempt at all.
func TestWakingPastTheDeadlineStartsNoAttempt(t *testing.T) {
	srv := countBytes(t)
	var rec recorder
	c := newClient(t, transport.Options{}, &rec)
	ctx := pausedContext{Context: context.Background(), deadline: time.Now().Add(-time.Second)}

	req, err := http.NewRequestWithContext(ctx, "POST", srv.url()+"/v1/charges", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Transport.RoundTrip(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	if !rubicon.SafeToRetry(err) {
		t.Fatalf("error %v: want not applied", err)
	}
	if got := len(rec.all()); got != 1 {
		t.Fatalf("%d attempts reported, want the one that was not started", got)
	}
	time.Sleep(50 * time.Millisecond)
	if n := srv.received.Load(); n != 0 {
		t.Fatalf("the server received %d bytes", n)
	}
}
