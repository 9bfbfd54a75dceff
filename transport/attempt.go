package transport

import (
	"context"
	"net"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon"
)

// traceKey is the context key under which net/http/httptrace stores a
// ClientTrace. The package does not export it; asking ContextClientTrace to
// look one up in a context that records the key it is asked for reveals it.
// Knowing it lets one attempt carry its trace in a single allocation instead
// of two (see attempt.Value).
var traceKey = func() any {
	s := &keySniffer{Context: context.Background()}
	httptrace.ContextClientTrace(s)
	return s.key
}()

type keySniffer struct {
	context.Context
	key any
}

// Value records the key it is asked for.
func (s *keySniffer) Value(key any) any {
	s.key = key
	return nil
}

// attempt follows one attempt of a request: it is the attempt's context, it
// carries the httptrace hook that sees which connection the attempt got,
// and from that connection's byte count it judges the attempt's phase.
type attempt struct {
	context.Context
	trace httptrace.ClientTrace
	// ownsKey is set when the attempt itself answers the httptrace key;
	// otherwise a context from httptrace.WithClientTrace does.
	ownsKey bool

	mu      sync.Mutex
	got     bool          // GotConn fired at least once
	conn    net.Conn      // the connection from the latest GotConn
	counted *countingConn // conn's counter, nil if conn cannot be counted
	start   int64         // counted's count at GotConn
	earlier int64         // bytes written on connections of earlier GotConns
	blind   bool          // some connection could not be counted
	// sentBefore counts the earlier GotConns on whose connection the
	// request was written: net/http's own resends of it.
	sentBefore int
	// late is set when the attempt's deadline had passed before it
	// started, so that it was never handed to the base transport.
	late bool
}

// tooLate reports whether the attempt's deadline has already passed, and
// marks the attempt as never started if so. A process that wakes from a
// pause after its deadline must not start a request.
func (a *attempt) tooLate() bool {
	deadline, ok := a.Deadline()
	if !ok || time.Now().Before(deadline) {
		return false
	}
	a.mu.Lock()
	a.late = true
	a.mu.Unlock()
	return true
}

// newAttempt returns an attempt whose context derives from parent, and the
// context to send the attempt's request with.
func newAttempt(parent context.Context) (*attempt, context.Context) {
	a := &attempt{Context: parent}
	a.trace.GotConn = a.gotConn
	if traceKey == nil || httptrace.ContextClientTrace(parent) != nil {
		// The caller traces too: let httptrace compose both traces.
		return a, httptrace.WithClientTrace(a, &a.trace)
	}
	a.ownsKey = true
	return a, a
}

// Value answers the httptrace key with the attempt's own trace and passes
// every other key to the parent.
func (a *attempt) Value(key any) any {
	if a.ownsKey && key == traceKey {
		return &a.trace
	}
	return a.Context.Value(key)
}

func (a *attempt) gotConn(info httptrace.GotConnInfo) {
	counted := counterOf(info.Conn)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.counted != nil:
		// net/http tries again, on another connection, inside this
		// attempt; if it wrote on the first one, the server may have got
		// the request twice.
		n := a.counted.written.Load() - a.start
		a.earlier += n
		if n > 0 {
			a.sentBefore++
		}
	case a.got:
		a.sentBefore++ // uncounted: assume it was written
	}
	a.got = true
	a.conn = info.Conn
	a.counted = counted
	if counted == nil {
		a.blind = true
		return
	}
	a.start = counted.written.Load()
	if !multiplexed(info.Conn, counted) {
		// On HTTP/1 the attempt is alone on the connection until it is
		// answered, so the connection's next write is this request's first.
		deadline, _ := a.Deadline()
		counted.setFence(deadline)
	}
}

// phase judges a failed attempt after the base RoundTrip returned an error.
// proofs is true when the base is an *http.Transport, which reports every
// connection through GotConn before writing on it. The judgement errs only
// towards Sent.
func (a *attempt) phase(proofs bool) (rubicon.Phase, int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.late {
		return rubicon.NotSent, 0
	}
	if !a.got {
		if proofs {
			return rubicon.NotSent, 0
		}
		return rubicon.Sent, 0
	}
	if a.blind {
		return rubicon.Sent, 0
	}
	n := a.earlier + a.counted.written.Load() - a.start
	if n > 0 {
		return rubicon.Sent, n
	}
	// Nothing written yet. On HTTP/1 net/http has stopped writing by the
	// time RoundTrip returns an error, so this is final. On HTTP/2 a
	// canceled request's headers may still be on their way out.
	if a.Err() != nil && multiplexed(a.conn, a.counted) {
		return rubicon.Sent, 0
	}
	return rubicon.NotSent, 0
}

// resends returns how many times net/http sent the attempt's request again
// by itself, after it was written on a connection that then failed. answered
// says whether the attempt ended with a response, proof that the last
// connection carried the request too.
func (a *attempt) resends(answered bool) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	sent := a.sentBefore
	switch {
	case !a.got:
		return 0
	case answered, a.blind, a.counted == nil:
		sent++
	case a.counted.written.Load()-a.start > 0:
		sent++
	}
	return max(sent-1, 0)
}
