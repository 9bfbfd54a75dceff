package transport

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
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
	// ResendWindow is how long the Transport remembers a call whose outcome
	// was unknown, so that a layer above it that sends the same call again
	// (an SDK's retry loop, an http.Client wrapper, the application) gets
	// that call's error at once, and nothing reaches the wire. A call is
	// the same when it carries the same idempotency key to the same origin
	// or, without a key, has the same method, URL and body under the same
	// [NewCall] (or none). Calls of opted-in operations and reads are not
	// remembered: sending those again is safe. Zero means
	// DefaultResendWindow; a negative window turns the memory off.
	ResendWindow time.Duration
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

// Report is how a logical call ended, for a caller that asked with
// [WithReport]. It describes every request sent under the context it was
// given to: an SDK's own retries of a request, a request that follows a
// redirect, a re-send that the Transport refused.
type Report struct {
	// Outcome is what the call proves about its effect, over every request
	// and attempt: Applied once an answer proves the effect applied;
	// Unknown when a request may have been applied and no later answer
	// proved it applied (a read that follows proves nothing either way);
	// otherwise the last request's outcome.
	Outcome rubicon.Outcome
	// Attempts counts the requests sent, over every request under the
	// context, net/http's own resends included. A refused re-send adds none.
	Attempts int
	// Requests counts the requests that reached the Transport under the
	// context, refused ones included.
	Requests int
	// Err is nil when the call's outcome is Applied. Otherwise it is the
	// *rubicon.Error that describes the last request, with the call's
	// Outcome and Attempts: the error RoundTrip returned, or, when
	// RoundTrip returned a response (a 429, a 503, a 404), the error that
	// describes that answer: its outcome, the wait the server asked for,
	// and why no further attempt was made.
	Err *rubicon.Error

	// unknown is set while an earlier request may have been applied.
	unknown bool
}

// add counts one request that ended with outcome, after attempts, as e
// describes it (nil when applied). A read leaves an unknown outcome
// unknown, since it applies nothing.
func (r *Report) add(outcome rubicon.Outcome, attempts int, read bool, e *rubicon.Error) {
	r.Requests++
	r.Attempts += attempts
	switch {
	case outcome == rubicon.Applied && !(read && r.unknown):
		r.Outcome, r.unknown, r.Err = rubicon.Applied, false, nil
		return
	case outcome == rubicon.Unknown:
		r.unknown = true
	}
	if r.unknown {
		outcome = rubicon.Unknown
	}
	r.Outcome = outcome
	if e == nil {
		// A read answered after a request whose outcome is unknown: the
		// error of the call is still that request's.
		if r.Err != nil {
			r.Err.Attempts = r.Attempts
		}
		return
	}
	whole := *e
	whole.Outcome, whole.Attempts = outcome, r.Attempts
	r.Err = &whole
}

type reportKey struct{}

// WithReport returns a context under which the Transport stores, in *r, how
// the logical call made under it ends: every request sent under the
// context adds to *r as RoundTrip returns, so that r describes an SDK's
// whole call, its own retries and the requests that follow redirects
// included. Use a fresh Report for each logical call, and one call at a
// time under it.
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
	resends   *resends
}

// New returns a Transport that sends through base. A nil base means a clone
// of http.DefaultTransport. An *http.Transport base is cloned and given a
// counting dialer, which is what lets the Transport prove that an attempt
// was not sent; the caller's transport is left as it was.
func New(base http.RoundTripper, opts Options) (*Transport, error) {
	t := &Transport{
		resends:   newResends(opts.ResendWindow),
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
//
// A request that repeats a call whose outcome was unknown is not sent: it
// gets that call's error at once (see [Options.ResendWindow]). A request
// that http.Client makes to follow a redirect to another origin carries no
// credential there, and one that may have an effect is not sent at all.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("the request has no URL")
	}
	mode, key := t.modeOf(req)
	c := call{t: t, req: req, mode: mode, header: req.Header, body: req.Body, getBody: req.GetBody}
	if err := c.followRedirect(); err != nil {
		return nil, err
	}
	if err := c.guardResend(start); err != nil {
		return nil, err
	}
	if t.budget != nil {
		t.budget.Call(req.URL.Host, start)
	}

	ctx := req.Context()
	ctxDeadline, _ := ctx.Deadline()
	callerDeadline := ctxDeadline
	if req.Cancel != nil && !ctxDeadline.IsZero() {
		// http.Client sets Cancel when its Timeout applies to a transport it
		// does not know, and replaces the error of a call its timer ends by
		// its own, untyped one: end the call first.
		callerDeadline = ctxDeadline.Add(-clientTimeoutMargin(start, ctxDeadline))
	}
	callCtx := ctx
	if deadline, ok := t.policy.CallDeadline(start, callerDeadline); ok && !deadline.Equal(ctxDeadline) {
		callCtx, c.cancelCall = context.WithDeadline(ctx, deadline)
	}

	header, base := t.prepare(c.header, req, mode, key)
	body := c.body
	for {
		attemptCtx, cancelAttempt := callCtx, context.CancelFunc(nil)
		if d := t.policy.AttemptTimeout(); d > 0 {
			attemptCtx, cancelAttempt = context.WithTimeout(callCtx, d)
		}
		a, sendCtx := newAttempt(attemptCtx)
		r := req.WithContext(sendCtx)
		r.Header, r.Body, r.GetBody = header, body, c.getBody

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
		d := t.decide(in, req, c.getBody, err, callCtx)
		var next io.ReadCloser
		if d.Retry && c.getBody != nil {
			// Rewind now, so that a body that cannot be produced again ends
			// the call with the response in hand.
			b, bodyErr := c.getBody()
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

// clientTimeoutMargin is how much earlier than an http.Client's timeout
// the Transport ends a call, so that the Client returns the Transport's
// error rather than its own: a tenth of the time left, at most 250 ms.
func clientTimeoutMargin(start, deadline time.Time) time.Duration {
	return min(deadline.Sub(start)/10, 250*time.Millisecond)
}

// prepare returns the header to send req with, and the transport to send it
// through.
func (t *Transport) prepare(header http.Header, req *http.Request, mode retry.Mode, key string) (http.Header, http.RoundTripper) {
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
	if resentAfterSent(mode, req.Method) {
		return header, t.base
	}
	header = hideKeyFromResend(header)
	if t.noReuse != nil && retry.IsSafeMethod(req.Method) && replayable(req) {
		// net/http sends a safe method again by itself after a reused
		// connection failed; only a fresh connection rules that out.
		return header, t.noReuse
	}
	return header, t.base
}

// resendKeys are the headers whose presence makes net/http send a written
// request again by itself, on another connection, when the reused
// connection it was written on fails (http.Request.isReplayable).
var resendKeys = [...]struct{ canonical, lower string }{
	{"Idempotency-Key", "idempotency-key"},
	{"X-Idempotency-Key", "x-idempotency-key"},
}

// hideKeyFromResend returns header with the idempotency key headers that
// net/http's own resend rule looks for under their canonical names stored
// under lower-case names instead: the same headers on the wire (header
// names are case-insensitive, and HTTP/2 sends them in lower case anyway),
// but a request that net/http no longer resends by itself. The request
// keeps its kept-alive connection, which a fresh connection per request
// would cost it.
func hideKeyFromResend(header http.Header) http.Header {
	var hidden http.Header
	for _, k := range resendKeys {
		v, ok := header[k.canonical]
		if !ok {
			continue
		}
		if hidden == nil {
			// A shallow copy: the values are shared, and nothing below
			// writes to them.
			hidden = make(http.Header, len(header))
			maps.Copy(hidden, header)
		}
		delete(hidden, k.canonical)
		hidden[k.lower] = v
	}
	if hidden == nil {
		return header
	}
	return hidden
}

// decide applies the policy to a failed attempt, then what the policy
// cannot see: the call's context, permanent errors, the body, the budget.
func (t *Transport) decide(in retry.Input, req *http.Request, getBody func() (io.ReadCloser, error), err error, callCtx context.Context) retry.Decision {
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
	case !(req.Body == nil || req.Body == http.NoBody || getBody != nil):
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
	// header, body and getBody are what the call sends: the request's own,
	// unless a redirect to another origin took credentials from the header
	// or telling a re-send apart had to read a body that cannot be read
	// twice.
	header  http.Header
	body    io.ReadCloser
	getBody func() (io.ReadCloser, error)
	// guarded is set when the call is remembered if its outcome is
	// unknown, as id, so that no layer above can send it again.
	guarded    bool
	identified bool
	id         identity
	// digesting digests a body that cannot be produced again as it is
	// sent, for id.
	digesting *digestingBody
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
	outcome := c.outcome(last.Outcome)
	var e *rubicon.Error
	if outcome != rubicon.Applied {
		if d.Reason == "" {
			d.Reason = retry.StopStatus
		}
		if d.RetryAfter == 0 {
			d.RetryAfter, _ = retry.ParseRetryAfter(resp.Header, time.Now())
		}
		e = c.error(last, d, nil)
	}
	if outcome == rubicon.Unknown && c.guarded {
		// An SDK above would send the request again on this answer (a 500,
		// a 503): tell it, in the headers its vendor's SDKs obey, not to.
		for _, h := range doNotRetryHeaders {
			resp.Header.Set(h, "false")
		}
	}
	c.ended(outcome, e)
	return resp
}

// doNotRetryHeaders are the response headers by which API vendors tell
// their SDKs not to send a request again: OpenAI's and Anthropic's SDKs
// (and others generated alike) read X-Should-Retry, Stripe's read
// Stripe-Should-Retry.
var doNotRetryHeaders = [...]string{"X-Should-Retry", "Stripe-Should-Retry"}

// fail ends the call with a *rubicon.Error describing the last attempt.
func (c *call) fail(last Attempt, d retry.Decision, cause error) error {
	cancel(c.cancelCall)
	e := c.error(last, d, cause)
	c.ended(e.Outcome, e)
	return e
}

// ended remembers a call whose outcome is unknown and adds the call to
// the caller's report.
func (c *call) ended(outcome rubicon.Outcome, e *rubicon.Error) {
	if outcome == rubicon.Unknown && c.guarded {
		c.remember(e)
	}
	if rep := reportOf(c.req.Context()); rep != nil {
		rep.add(outcome, c.attempts, c.isRead(), e)
	}
}

// remember records the call as one whose outcome is unknown.
func (c *call) remember(e *rubicon.Error) {
	if !c.identified {
		c.id = identify(c.req, c.t.keyHeader)
	}
	id := c.id
	if id.key == "" && id.digest == "" {
		switch {
		case c.digesting != nil:
			id.digest = c.digesting.digest()
		case c.getBody != nil:
			d, _, _, ok := digestBody(c.body, c.getBody)
			if !ok {
				return
			}
			id.digest = d
		default:
			id.digest = emptyDigest
		}
	}
	c.t.resends.remember(id, e, time.Now())
}

// guardResend refuses a request that repeats a call whose outcome is
// unknown, before anything is sent, and otherwise gets the call ready to
// be remembered should its own outcome be unknown.
func (c *call) guardResend(now time.Time) error {
	c.guarded = c.t.resends != nil && c.mode != retry.OptedIn && !c.isRead()
	if !c.guarded {
		return nil
	}
	if c.t.resends.remembers() {
		c.id, c.identified = identify(c.req, c.t.keyHeader), true
		var ended *endedCall
		ended, c.body, c.getBody = c.t.resends.find(&c.id, c.body, c.getBody, now)
		if ended != nil {
			if c.body != nil {
				c.body.Close()
			}
			e := refusal(c.req, ended, now)
			c.ended(rubicon.Unknown, e)
			return e
		}
	}
	if c.getBody == nil && c.body != nil && c.body != http.NoBody && !hasKey(c.req.Header, c.t.keyHeader) {
		c.digesting = &digestingBody{ReadCloser: c.body, h: sha256.New()}
		c.body = c.digesting
	}
	return nil
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
