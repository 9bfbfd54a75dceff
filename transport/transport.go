package transport

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/retry"
)

// DefaultIdempotencyHeader is the header that carries an opted-in
// operation's idempotency key unless Options says otherwise.
const DefaultIdempotencyHeader = "Idempotency-Key"

// Options configure a [Transport]. The zero value is usable: the default
// retry policy, the default retry budget, and no operation opted in.
type Options struct {
	// Policy decides retries. Nil means retry.DefaultConfig().
	Policy *retry.Policy
	// Budget limits retries per host. Nil means a budget with
	// retry.DefaultBudgetConfig(), unless NoBudget is set.
	Budget *retry.Budget
	// NoBudget turns the retry budget off.
	NoBudget bool
	// IdempotencyHeader names the header that carries the idempotency key
	// of opted-in operations. Empty means "Idempotency-Key".
	IdempotencyHeader string
	// Operations set how matching requests may be retried once sent. This is
	// the only place, with [WithMode] and [WithIdempotencyKey] per request,
	// where a non-idempotent operation can opt in to retries.
	Operations []Operation
	// Observe, if set, is called after every attempt, in the goroutine that
	// made the call. It must not block or modify the request.
	Observe func(Attempt)
}

// Attempt describes one finished attempt, for [Options.Observe].
type Attempt struct {
	// Request is the caller's request. Do not modify it.
	Request *http.Request
	// Number counts the requests the call has sent so far, this attempt's
	// included: net/http's own resends (see Resends) count, as the server
	// may have received each of them.
	Number int
	// Resends is how many times net/http sent this attempt again by itself,
	// on another connection, after a reused connection failed once the
	// request was written. Usually 0.
	Resends int
	// Mode is how the call may be retried once sent.
	Mode retry.Mode
	// Phase is how far the attempt got; Answered when a response arrived.
	Phase rubicon.Phase
	// StatusCode is the response status, or 0.
	StatusCode int
	// Outcome is what this attempt proves about the request's effect
	// ([retry.Outcome]).
	Outcome rubicon.Outcome
	// BytesWritten is what the attempt wrote on its connection, when counted.
	BytesWritten int64
	// Err is the attempt's error, or nil when a response arrived.
	Err error
	// Decision is what follows: Retry and Wait, and the reason. It is the
	// zero Decision for a response that needed no decision. A call that
	// stops on a response because the server asked for a longer wait than
	// the policy allows or the deadline leaves has Reason
	// retry.StopRetryAfterTooLong and the wait in RetryAfter.
	Decision retry.Decision
}

// Report is how a call ended, for a caller that asked with [WithReport].
type Report struct {
	// Outcome is what the call proves about the request's effect, over
	// every attempt: Applied after a success.
	Outcome rubicon.Outcome
	// Attempts counts the requests sent, net/http's own resends included.
	Attempts int
	// Err is nil when the call's outcome is Applied. Otherwise it is the
	// *rubicon.Error that describes the call: the error RoundTrip returned,
	// or, when RoundTrip returned a response (a 429, a 503, a 404), the
	// error that describes that answer: its outcome, the attempts, the wait
	// the server asked for, and why no further attempt was made.
	Err *rubicon.Error
}

type reportKey struct{}

// WithReport returns a context under which the Transport stores, in *r, how
// each call ends, once RoundTrip returns. Through an http.Client that
// follows redirects, *r describes the last request, whose response the
// client returns.
//
// RoundTrip returns every response that ends a call, as the
// http.RoundTripper contract requires, including one after which the
// transport stopped because the server asked for a longer wait than the
// policy or the deadline allows: a caller that wants that case, or any
// answer that is not a success, as a typed error reads r.Err.
func WithReport(ctx context.Context, r *Report) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

func reportOf(ctx context.Context) *Report {
	r, _ := ctx.Value(reportKey{}).(*Report)
	return r
}

// Transport is an http.RoundTripper that retries only what is provably safe
// to retry. A call that ends without a response returns a *rubicon.Error
// that says whether the request may have been applied. It is safe for
// concurrent use.
type Transport struct {
	base http.RoundTripper
	// noReuse sends requests that net/http would silently resend on a reused
	// connection although their mode forbids it; nil for foreign bases.
	noReuse   *http.Transport
	proofs    bool
	policy    *retry.Policy
	budget    *retry.Budget
	keyHeader string
	ops       *operations
	observe   func(Attempt)
}

// New returns a Transport that sends through base. A nil base means a clone
// of http.DefaultTransport. An *http.Transport base is cloned and given a
// counting dialer, which is what lets the Transport prove that an attempt
// was not sent; the caller's transport is left as it was.
func New(base http.RoundTripper, opts Options) (*Transport, error) {
	t := &Transport{
		policy:    opts.Policy,
		budget:    opts.Budget,
		keyHeader: http.CanonicalHeaderKey(opts.IdempotencyHeader),
		observe:   opts.Observe,
	}
	if t.policy == nil {
		t.policy = retry.MustNew(retry.DefaultConfig())
	}
	if opts.NoBudget {
		t.budget = nil
	} else if t.budget == nil {
		b, err := retry.NewBudget(retry.DefaultBudgetConfig())
		if err != nil {
			return nil, err
		}
		t.budget = b
	}
	if t.keyHeader == "" {
		t.keyHeader = DefaultIdempotencyHeader
	}
	ops, err := newOperations(opts.Operations)
	if err != nil {
		return nil, err
	}
	t.ops = ops

	if base == nil {
		base = http.DefaultTransport
	}
	if ht, ok := base.(*http.Transport); ok {
		ht = instrument(ht)
		t.base, t.proofs = ht, true
		t.noReuse = ht.Clone()
		t.noReuse.DisableKeepAlives = true
	} else {
		t.base = base
	}
	return t, nil
}

// instrument returns a clone of ht whose connections count written bytes.
func instrument(ht *http.Transport) *http.Transport {
	ht = ht.Clone()
	dial := ht.DialContext
	if dial == nil {
		if ht.Dial != nil {
			legacy := ht.Dial
			dial = func(_ context.Context, network, addr string) (net.Conn, error) { return legacy(network, addr) }
			ht.Dial = nil
		} else {
			dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		}
	}
	ht.DialContext = countingDial(dial)
	return ht
}

// NewClient returns an *http.Client whose transport is a Transport over a
// clone of http.DefaultTransport.
func NewClient(opts Options) (*http.Client, error) {
	t, err := New(nil, opts)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: t}, nil
}

// CloseIdleConnections closes the idle connections of the underlying
// transports.
func (t *Transport) CloseIdleConnections() {
	type closer interface{ CloseIdleConnections() }
	if c, ok := t.base.(closer); ok {
		c.CloseIdleConnections()
	}
	if t.noReuse != nil {
		t.noReuse.CloseIdleConnections()
	}
}

// RoundTrip sends req, retrying only what the policy allows. It returns the
// response when one ended the call, whatever its status, as the
// http.RoundTripper contract requires, and a *rubicon.Error only when the
// call ended without one. [WithReport] tells a caller what a returned
// response proves and why no further attempt was made.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("rubicon: request has no URL")
	}
	mode, key := t.modeOf(req)
	if t.budget != nil {
		t.budget.Call(req.URL.Host, start)
	}

	ctx := req.Context()
	callerDeadline, _ := ctx.Deadline()
	callCtx, cancelCall := ctx, context.CancelFunc(nil)
	if deadline, ok := t.policy.CallDeadline(start, callerDeadline); ok && !deadline.Equal(callerDeadline) {
		callCtx, cancelCall = context.WithDeadline(ctx, deadline)
	}

	header, base := t.prepare(req, mode, key)
	c := call{t: t, req: req, mode: mode, cancelCall: cancelCall}
	body := req.Body
	for {
		attemptCtx, cancelAttempt := callCtx, context.CancelFunc(nil)
		if d := t.policy.AttemptTimeout(); d > 0 {
			attemptCtx, cancelAttempt = context.WithTimeout(callCtx, d)
		}
		a, sendCtx := newAttempt(attemptCtx)
		r := req.WithContext(sendCtx)
		r.Header, r.Body = header, body

		var resp *http.Response
		var err error
		if a.tooLate() {
			closeBody(r)
			err = errFenced
		} else {
			resp, err = base.RoundTrip(r)
		}
		now := time.Now()
		info := c.attempted(a, resp, err)
		if err == nil && !t.policy.MayRetryStatus(resp.StatusCode) {
			t.notify(info)
			return c.deliver(resp, cancelAttempt, info, retry.Decision{}), nil
		}
		in := retry.Input{Method: req.Method, Mode: mode, Attempt: info.Number, Sent: info.Phase != rubicon.NotSent,
			Status: info.StatusCode, Start: start, Now: now, Deadline: callerDeadline, Jitter: rand.Float64()}
		if err == nil {
			in.Header = resp.Header
		}
		d := t.decide(in, req, err, callCtx)
		var next io.ReadCloser
		if d.Retry && req.GetBody != nil {
			// Rewind now, so that a body that cannot be produced again ends
			// the call with the response in hand.
			b, bodyErr := req.GetBody()
			if bodyErr != nil {
				d = retry.Decision{RetryAfter: d.RetryAfter, Reason: reasonBodyNotReplayable}
				if err != nil {
					err = fmt.Errorf("rewinding the request body: %w (after %w)", bodyErr, err)
				}
			}
			next = b
		}
		info.Decision = d
		t.notify(info)

		if !d.Retry {
			if err == nil {
				return c.deliver(resp, cancelAttempt, info, d), nil
			}
			cancel(cancelAttempt)
			return nil, c.fail(info, d, err)
		}
		if err == nil {
			drain(resp)
		}
		cancel(cancelAttempt)

		if err := sleep(callCtx, d.Wait); err != nil {
			if next != nil {
				next.Close()
			}
			info.Err = errors.Join(context.Cause(callCtx), info.Err)
			return nil, c.fail(info, retry.Decision{RetryAfter: d.RetryAfter, Reason: endReason(callCtx)}, info.Err)
		}
		if next != nil {
			body = next
		}
	}
}

// prepare returns the header to send req with, and the transport to send it
// through.
func (t *Transport) prepare(req *http.Request, mode retry.Mode, key string) (http.Header, http.RoundTripper) {
	header := req.Header
	if header == nil {
		// As http.Client does, read a nil header as an empty one.
		header = make(http.Header)
	}
	if mode == retry.OptedIn {
		// One key for the logical call, sent on every attempt.
		header = header.Clone()
		switch {
		case key != "":
			header.Set(t.keyHeader, key)
		case header.Get(t.keyHeader) == "":
			header.Set(t.keyHeader, crand.Text())
		}
		return header, t.base
	}
	if t.noReuse != nil && netHTTPWouldResend(req) && !resentAfterSent(mode, req.Method) {
		return header, t.noReuse
	}
	return header, t.base
}

// decide applies the policy to a failed attempt, then what the policy
// cannot see: the call's context, permanent errors, the body, the budget.
func (t *Transport) decide(in retry.Input, req *http.Request, err error, callCtx context.Context) retry.Decision {
	d := t.policy.Decide(in)
	switch {
	case !d.Retry:
	case callCtx.Err() != nil:
		// The caller gave up, or the deadline passed, during the attempt.
		d = retry.Decision{RetryAfter: d.RetryAfter, Reason: endReason(callCtx)}
	case pastDeadline(callCtx, in.Now):
		// The deadline has passed and its timer has not fired yet, as
		// after a pause of the process.
		d = retry.Decision{RetryAfter: d.RetryAfter, Reason: retry.StopDeadline}
	case err != nil && permanent(err):
		d = retry.Decision{Reason: reasonPermanent}
	case !replayable(req):
		d = retry.Decision{RetryAfter: d.RetryAfter, Reason: reasonBodyNotReplayable}
	case t.budget != nil && !t.budget.Withdraw(req.URL.Host, in.Now):
		d = retry.Decision{RetryAfter: d.RetryAfter, Reason: retry.StopBudget}
	}
	return d
}

// pastDeadline reports whether ctx's deadline is not after now.
func pastDeadline(ctx context.Context, now time.Time) bool {
	deadline, ok := ctx.Deadline()
	return ok && !now.Before(deadline)
}

// endReason says why ctx ended.
func endReason(ctx context.Context) retry.Reason {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return retry.StopDeadline
	}
	return reasonCanceled
}

// Reasons to stop that the transport adds to the policy's.
const (
	reasonBodyNotReplayable retry.Reason = "the request body cannot be sent again (set GetBody)"
	reasonCanceled          retry.Reason = "the call's context was canceled"
	reasonPermanent         retry.Reason = "the error does not go away by trying again"
)

// permanent reports errors that another attempt would meet again: a
// certificate that does not verify, for one.
func permanent(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// call carries what the end of a call needs.
type call struct {
	t          *Transport
	req        *http.Request
	mode       retry.Mode
	cancelCall context.CancelFunc
	// attempts counts the requests sent so far, net/http's own resends
	// included.
	attempts int
	// mayHaveApplied is set once any attempt may have had an effect; the
	// call's outcome is then unknown unless a later answer proves it applied.
	mayHaveApplied bool
}

// attempted describes the attempt a has just finished with resp or err,
// and counts it.
func (c *call) attempted(a *attempt, resp *http.Response, err error) Attempt {
	info := Attempt{Request: c.req, Mode: c.mode}
	if err == nil {
		info.Phase, info.StatusCode = rubicon.Answered, resp.StatusCode
	} else {
		info.Phase, info.BytesWritten = a.phase(c.t.proofs)
		info.Err = err
	}
	info.Resends = a.resends(err == nil)
	c.attempts += 1 + info.Resends
	info.Number = c.attempts
	info.Outcome = c.t.policy.Outcome(retry.Result{Method: c.req.Method, Mode: c.mode, Phase: info.Phase, Status: info.StatusCode})
	if info.Resends > 0 && !c.isRead() {
		// net/http sent the request on a connection that failed after it
		// was written, then sent it again: the first may have been applied.
		c.mayHaveApplied = true
	}
	if info.Outcome == rubicon.Unknown {
		c.mayHaveApplied = true
	}
	return info
}

// isRead reports whether the call's request has no effect to apply.
func (c *call) isRead() bool {
	return c.t.policy.Outcome(retry.Result{Method: c.req.Method, Mode: c.mode, Phase: rubicon.Sent}) == rubicon.NotApplied
}

// outcome is what the whole call proves, given the last attempt's outcome:
// an answer that proves the effect applied settles it; otherwise an earlier
// attempt that may have applied it leaves it unknown.
func (c *call) outcome(last rubicon.Outcome) rubicon.Outcome {
	if last == rubicon.NotApplied && c.mayHaveApplied {
		return rubicon.Unknown
	}
	return last
}

// deliver hands resp to the caller as the server sent it. The contexts the
// call derived stay alive until the body is closed, since the body is read
// under them.
func (c *call) deliver(resp *http.Response, cancelAttempt context.CancelFunc, last Attempt, d retry.Decision) *http.Response {
	resp.Request = c.req
	if cancelAttempt != nil || c.cancelCall != nil {
		resp.Body = withCancel(resp.Body, cancelAttempt, c.cancelCall)
	}
	if rep := reportOf(c.req.Context()); rep != nil {
		outcome := c.outcome(last.Outcome)
		*rep = Report{Outcome: outcome, Attempts: c.attempts}
		if outcome != rubicon.Applied {
			if d.Reason == "" {
				d.Reason = retry.StopStatus
			}
			if d.RetryAfter == 0 {
				d.RetryAfter, _ = retry.ParseRetryAfter(resp.Header, time.Now())
			}
			rep.Err = c.error(last, d, nil)
		}
	}
	return resp
}

// fail ends the call with a *rubicon.Error describing the last attempt.
func (c *call) fail(last Attempt, d retry.Decision, cause error) error {
	cancel(c.cancelCall)
	e := c.error(last, d, cause)
	if rep := reportOf(c.req.Context()); rep != nil {
		*rep = Report{Outcome: e.Outcome, Attempts: e.Attempts, Err: e}
	}
	return e
}

func (c *call) error(last Attempt, d retry.Decision, cause error) *rubicon.Error {
	return &rubicon.Error{
		Method:       methodOrGet(c.req.Method),
		URL:          rubicon.RedactURL(c.req.URL),
		Phase:        last.Phase,
		Outcome:      c.outcome(last.Outcome),
		Attempts:     c.attempts,
		BytesWritten: last.BytesWritten,
		StatusCode:   last.StatusCode,
		RetryAfter:   d.RetryAfter,
		Reason:       d.Reason.Explain(),
		Err:          cause,
	}
}

func (t *Transport) notify(a Attempt) {
	if t.observe != nil {
		t.observe(a)
	}
}

// replayable reports whether req's body, if any, can be produced again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// netHTTPWouldResend reports whether net/http would itself resend req when
// a reused connection fails after the request was written: it does so for
// replayable requests with a safe method or an idempotency key header.
func netHTTPWouldResend(req *http.Request) bool {
	if !replayable(req) {
		return false
	}
	if retry.IsSafeMethod(req.Method) {
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

// resentAfterSent reports whether mode lets a request with method be sent
// again after it was sent.
func resentAfterSent(mode retry.Mode, method string) bool {
	return mode == retry.OptedIn || (mode == retry.ByMethod && retry.IsSafeMethod(method))
}

func methodOrGet(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return m
}

func cancel(f context.CancelFunc) {
	if f != nil {
		f()
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// drain reads a little of a response that will not be used, so that its
// connection can be reused, and closes it.
func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// sleep waits for d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// withCancel returns body with Close also releasing the call's contexts.
// A body that can be written (a 101 Switching Protocols response) stays
// writable.
func withCancel(body io.ReadCloser, attempt, call context.CancelFunc) io.ReadCloser {
	cb := cancelBody{ReadCloser: body, attempt: attempt, call: call}
	if w, ok := body.(io.Writer); ok {
		return &cancelReadWriteBody{cancelBody: cb, w: w}
	}
	return &cb
}

type cancelBody struct {
	io.ReadCloser
	attempt, call context.CancelFunc
}

// Close closes the body, then releases the contexts it was read under.
func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	cancel(b.attempt)
	cancel(b.call)
	return err
}

type cancelReadWriteBody struct {
	cancelBody
	w io.Writer
}

// Write writes to the underlying body.
func (b *cancelReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }
