// Package faultserver is a scripted HTTP server on loopback for testing
// what a client does when a call fails where it matters for side effects:
// before the request left, after the server read it, or with an answer
// that asks the client to wait. It is to failures what net/http/httptest
// is to handlers, and it is how rubicon tests its own transport; use it to
// test yours.
//
// Every connection follows the next [Step] of a script: refuse it, reset it
// before or after reading the request, close it after reading, hang, or
// answer with a chosen status, headers and delay (a 429 with Retry-After,
// a 503). The server counts the requests that reached its handler, the
// effects, so that a test can assert that a side effect happened at most
// once: [Server.Effects], [Server.Requests].
//
// On HTTP/1.1 each connection carries one request and every answer closes
// it, so that the next step applies to the client's next connection,
// unless the step keeps the connection alive ([Step.KeepAlive]) to script
// faults on reused connections. A client that speaks HTTP/2 with prior
// knowledge (h2c) is served too; there each stream takes the next step,
// and [RefuseStream] is available.
//
// A refused connection never reaches the server, so the test reports it
// with [Server.Refused], typically from the client's observer, and the
// script moves on.
package faultserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is what the server does with one connection.
type Fault int

const (
	// Answer reads the request and answers with the step's status.
	Answer Fault = iota
	// Refuse refuses the connection: nothing listens on the port until the
	// client's refusal is reported with [Server.Refused].
	Refuse
	// ResetOnAccept accepts the connection and resets it before reading.
	// Nothing reaches the handler.
	ResetOnAccept
	// ResetAfterRead reads the whole request, so that its effect happens,
	// then resets the connection without answering.
	ResetAfterRead
	// CloseAfterRead reads the whole request (an effect), then closes the
	// connection cleanly without answering.
	CloseAfterRead
	// Hang reads the whole request (an effect), then never answers; the
	// connection stays open until the client gives up.
	Hang
	// RefuseStream answers an HTTP/2 stream with RST_STREAM REFUSED_STREAM
	// before reading it: the protocol's promise that nothing was
	// processed. On HTTP/1.1 it resets the connection, like ResetOnAccept.
	RefuseStream
)

var faultNames = [...]string{"answer", "refuse", "reset-on-accept", "reset-after-read", "close-after-read", "hang", "refuse-stream"}

// String names the fault.
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Effect reports whether a request meeting this fault reaches the handler.
// A refused stream does not.
func (f Fault) Effect() bool {
	return f == Answer || f == ResetAfterRead || f == CloseAfterRead || f == Hang
}

// Step is the script for one connection (one stream on HTTP/2).
type Step struct {
	// Fault is what the server does.
	Fault Fault
	// Status, Header and Body make the answer of an Answer step. A zero
	// Status means 200.
	Status int
	Header http.Header
	Body   string
	// Delay holds an Answer step's answer back after the request was read.
	Delay time.Duration
	// KeepAlive keeps an Answer step's HTTP/1.1 connection open after the
	// answer: the client may send its next request on it, and that request
	// takes the next step. It scripts faults on reused connections. A
	// Refuse or ResetOnAccept step met there resets the kept connection
	// before reading; a Refuse step still applies to the next new
	// connection.
	KeepAlive bool
}

// String describes the step for test output.
func (s Step) String() string {
	if s.Fault != Answer {
		return s.Fault.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", s.status())
	for _, k := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := s.Header.Get(k); v != "" {
			fmt.Fprintf(&b, " %s: %s", k, v)
		}
	}
	if s.Delay > 0 {
		fmt.Fprintf(&b, " after %s", s.Delay)
	}
	if s.KeepAlive {
		b.WriteString(" keep-alive")
	}
	return b.String()
}

// answered is the status s answers with, or 0 if it gives no answer.
func (s Step) answered() int {
	if s.Fault != Answer {
		return 0
	}
	return s.status()
}

func (s Step) status() int {
	if s.Status == 0 {
		return http.StatusOK
	}
	return s.Status
}

// OK answers 200.
func OK() Step { return Step{Fault: Answer, Status: http.StatusOK, Body: "ok"} }

// Status answers with code.
func Status(code int) Step { return Step{Fault: Answer, Status: code} }

// RetryAfter answers with code and Retry-After in delta-seconds.
func RetryAfter(code int, wait time.Duration) Step {
	return Step{Fault: Answer, Status: code, Header: http.Header{"Retry-After": {strconv.Itoa(int(wait / time.Second))}}}
}

// RetryAfterDate answers with code and Retry-After as an HTTP-date.
func RetryAfterDate(code int, at time.Time) Step {
	return Step{Fault: Answer, Status: code, Header: http.Header{"Retry-After": {at.UTC().Format(http.TimeFormat)}}}
}

// Do returns a step with fault f.
func Do(f Fault) Step { return Step{Fault: f} }

// Request is what the server recorded of a request it read.
type Request struct {
	// Method is the request's method.
	Method string
	// Path is the request's path, without the query.
	Path string
	// Header is the request's header, as received.
	Header http.Header
	// BodyBytes is the length of the body read.
	BodyBytes int64
	// Fault is the step the request met.
	Fault Fault
	// Status is the status the step answered with, or 0 when the step
	// gave no answer.
	Status int
}

// Server is a scripted HTTP server on 127.0.0.1. It is safe for concurrent
// use.
type Server struct {
	addr string
	// After the script, every connection gets this step (200 by default).
	after Step

	// reservation keeps the port bound while the listener is closed.
	reservation io.Closer

	mu       sync.Mutex
	ln       net.Listener // nil while refusing
	script   []Step
	next     int
	effects  int
	accepted int
	requests []Request
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// Start starts a server on a free loopback port that plays steps, one per
// connection, then answers 200 to every further connection.
func Start(steps ...Step) (*Server, error) {
	ln, err := listen("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultserver: listen on loopback: %w", err)
	}
	addr := ln.Addr().String()
	reservation, err := reservePort(addr)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{addr: addr, reservation: reservation, after: OK(), script: steps, conns: make(map[net.Conn]struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ln = ln
	s.serve(ln)
	s.prepareLocked()
	return s, nil
}

// URL returns the server's base URL, "http://127.0.0.1:PORT".
func (s *Server) URL() string { return "http://" + s.addr }

// Addr returns the server's host:port.
func (s *Server) Addr() string { return s.addr }

// SetDefault sets the step for every connection after the script (200 by
// default).
func (s *Server) SetDefault(step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.after = step
	s.prepareLocked()
}

// Then appends steps to the script.
func (s *Server) Then(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
	s.prepareLocked()
}

// Effects returns how many requests reached the handler.
func (s *Server) Effects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects
}

// Accepted returns how many connections the server accepted.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Requests returns the requests read so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Refusing reports whether the current step refuses connections.
func (s *Server) Refusing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln == nil && !s.closed
}

// Refused moves past a Refuse step once the client has been refused, and
// listens again unless the next step refuses too. The server cannot see a
// refused connection, so the test reports it, typically from the client's
// observer.
func (s *Server) Refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ln != nil {
		return nil
	}
	s.consumeLocked()
	if s.currentLocked().Fault == Refuse {
		return nil
	}
	ln, err := listen(s.addr)
	if err != nil {
		return fmt.Errorf("faultserver: listen again on %s: %w", s.addr, err)
	}
	s.ln = ln
	s.serve(ln)
	return nil
}

// Close stops the server, ends every open connection and waits for its
// goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.reservation.Close()
}

func (s *Server) currentLocked() Step {
	if s.next < len(s.script) {
		return s.script[s.next]
	}
	return s.after
}

// consumeLocked moves past the current step. Past the end of the script
// the default step applies to every connection, including steps appended
// later by Then, which come next.
func (s *Server) consumeLocked() {
	if s.next < len(s.script) {
		s.next++
	}
}

// prepareLocked stops listening when the current step refuses, before the
// client can dial for it.
func (s *Server) prepareLocked() {
	if s.currentLocked().Fault == Refuse && s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
}

func (s *Server) serve(ln net.Listener) {
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				c.Close()
				return
			}
			step := s.currentLocked()
			s.consumeLocked()
			s.accepted++
			s.conns[c] = struct{}{}
			s.wg.Go(func() { s.handle(c, step) })
			s.mu.Unlock()
		}
	})
}

func (s *Server) handle(c net.Conn, step Step) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	if step.Fault == ResetOnAccept {
		s.advance()
		reset(c)
		return
	}
	br := bufio.NewReader(c)
	if isH2Preface(br) {
		s.serveH2(c, br, step)
		return
	}
	for {
		if !s.serveOne(c, br, step) {
			return
		}
		// The connection stays open: its next request takes the next step.
		if _, err := br.Peek(1); err != nil {
			return
		}
		s.mu.Lock()
		step = s.currentLocked()
		if step.Fault == Refuse {
			s.mu.Unlock()
			reset(c)
			return
		}
		s.consumeLocked()
		s.mu.Unlock()
		if step.Fault == ResetOnAccept {
			s.advance()
			reset(c)
			return
		}
	}
}

// serveOne plays step on the next request of an HTTP/1.1 connection, and
// reports whether the connection stays open for another.
func (s *Server) serveOne(c net.Conn, br *bufio.Reader, step Step) bool {
	if step.Fault == RefuseStream {
		s.advance()
		reset(c)
		return false
	}
	req, err := s.read(br, step)
	s.advance()
	if err != nil {
		return false
	}
	switch step.Fault {
	case ResetAfterRead:
		reset(c)
	case CloseAfterRead:
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	case Hang:
		io.Copy(io.Discard, c) // until the client or Close ends it
	default:
		if step.Delay > 0 {
			time.Sleep(step.Delay)
		}
		resp := &http.Response{
			StatusCode: step.status(), ProtoMajor: 1, ProtoMinor: 1,
			Header: step.Header.Clone(), Close: !step.KeepAlive, Request: req,
			ContentLength: int64(len(step.Body)), Body: io.NopCloser(strings.NewReader(step.Body)),
		}
		if resp.Header == nil {
			resp.Header = make(http.Header)
		}
		if resp.Write(c) != nil {
			return false
		}
		return step.KeepAlive
	}
	return false
}

// advance prepares the step after the current connection's, once the
// current one is about to end: a Refuse step closes the listener before
// the client can learn the answer and dial again.
func (s *Server) advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.prepareLocked()
	}
}

// read reads one whole request from br and records it as an effect.
func (s *Server) read(br *bufio.Reader, step Step) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(io.Discard, req.Body)
	if err != nil {
		return nil, err
	}
	if errors.Is(req.Body.Close(), io.ErrUnexpectedEOF) {
		return nil, io.ErrUnexpectedEOF
	}
	s.record(Request{Method: req.Method, Path: req.URL.Path, Header: req.Header, BodyBytes: n, Fault: step.Fault, Status: step.answered()})
	return req, nil
}

// record counts a request that reached the handler.
func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.effects++
	s.requests = append(s.requests, r)
}

// reset closes c with a TCP RST instead of a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}
