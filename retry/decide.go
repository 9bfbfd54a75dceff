package retry

import (
	"net/http"
	"time"
)

// Input describes a failed attempt and the call it belongs to.
type Input struct {
	// Method is the request's HTTP method.
	Method string
	// Mode is how the operation may be retried once sent.
	Mode Mode
	// Attempt is the number of attempts made so far, this one included.
	Attempt int
	// Sent reports whether any byte of the request may have reached the
	// server. False only when that is proven not to have happened.
	Sent bool
	// Status is the response status, or 0 when no complete response arrived.
	Status int
	// Header is the response header, read for Retry-After. May be nil.
	Header http.Header
	// Start is when the call began; Now is the current time.
	Start, Now time.Time
	// Deadline is the caller's own deadline (a context's), or the zero time.
	// The earlier of it and the policy's Deadline applies.
	Deadline time.Time
	// Jitter is a uniform random number in [0, 1) that picks the wait inside
	// the backoff window. Decide itself draws nothing.
	Jitter float64
}

// Decision is the answer of [Policy.Decide].
type Decision struct {
	// Retry reports whether to make another attempt.
	Retry bool
	// Wait is how long to wait before it.
	Wait time.Duration
	// RetryAfter is the wait the server asked for, or 0. It is set even when
	// the decision is to stop, so that the caller can report it.
	RetryAfter time.Duration
	// Reason says why.
	Reason Reason
}

// Reason names the rule behind a [Decision].
type Reason string

// Reasons to retry.
const (
	// RetryNotSent: nothing reached the wire.
	RetryNotSent Reason = "not_sent"
	// RetrySafeMethod: a safe method failed after it was sent.
	RetrySafeMethod Reason = "safe_method"
	// RetryOptedIn: the operation opted in with an idempotency key.
	RetryOptedIn Reason = "opted_in"
	// RetryNotProcessed: a status the policy declares "not processed".
	RetryNotProcessed Reason = "not_processed_status"
)

// Reasons to stop.
const (
	// StopSentNotIdempotent: sent, and neither safe nor opted in.
	StopSentNotIdempotent Reason = "sent_not_idempotent"
	// StopStatus: an answer whose status is not retried for this request.
	StopStatus Reason = "status_not_retried"
	// StopAttempts: MaxAttempts reached.
	StopAttempts Reason = "attempts_exhausted"
	// StopDeadline: the wait would not end before the deadline.
	StopDeadline Reason = "deadline"
	// StopRetryAfterTooLong: the server asked for more than MaxRetryAfter
	// or than the deadline leaves.
	StopRetryAfterTooLong Reason = "retry_after_too_long"
	// StopBudget: the host's retry budget is spent (set by the caller that
	// keeps the Budget, not by Decide).
	StopBudget Reason = "budget_exhausted"
)

// Explain returns the reason as a sentence fragment for error messages.
func (r Reason) Explain() string {
	switch r {
	case RetryNotSent:
		return "nothing was sent, so a retry is safe"
	case RetrySafeMethod:
		return "the method is safe, so a retry is harmless"
	case RetryOptedIn:
		return "the operation opted in to retries with an idempotency key"
	case RetryNotProcessed:
		return "the API declares that this status means the request was not processed"
	case StopSentNotIdempotent:
		return "the request was sent and its method is not retried once sent unless the operation opts in"
	case StopStatus:
		return "this status is not retried for this request"
	case StopAttempts:
		return "no attempts left"
	case StopDeadline:
		return "the next wait does not fit before the deadline"
	case StopRetryAfterTooLong:
		return "the server asked for a longer wait than the policy allows or the deadline leaves"
	case StopBudget:
		return "the retry budget for this host is spent"
	}
	return string(r)
}

// Decide says whether the attempt described by in should be followed by
// another, and after what wait. It is a pure function of its input: the same
// input gives the same decision.
func (p *Policy) Decide(in Input) Decision {
	reason, ok := p.eligible(in)
	if !ok {
		return Decision{Reason: reason}
	}
	if in.Attempt >= p.cfg.MaxAttempts {
		return Decision{Reason: StopAttempts}
	}

	var requested time.Duration
	if in.Status != 0 {
		if d, ok := ParseRetryAfter(in.Header, in.Now); ok {
			requested = d
		}
	}
	if requested > p.cfg.MaxRetryAfter {
		return Decision{RetryAfter: requested, Reason: StopRetryAfterTooLong}
	}
	wait := requested
	if wait == 0 {
		wait = p.backoff(in.Attempt, in.Jitter)
	}

	if deadline, ok := p.deadline(in); ok && !in.Now.Add(wait).Before(deadline) {
		if requested > 0 {
			return Decision{RetryAfter: requested, Reason: StopRetryAfterTooLong}
		}
		return Decision{Reason: StopDeadline}
	}
	return Decision{Retry: true, Wait: wait, RetryAfter: requested, Reason: reason}
}

// eligible applies the retry table: may this failure be retried at all?
func (p *Policy) eligible(in Input) (Reason, bool) {
	switch {
	case in.Status == 0 && !in.Sent:
		return RetryNotSent, true
	case in.Mode == NotSentOnly:
		if in.Status != 0 {
			return StopStatus, false
		}
		return StopSentNotIdempotent, false
	case in.Status != 0 && p.notProcessed.has(in.Status):
		return RetryNotProcessed, true
	case in.Status != 0 && !p.retry.has(in.Status):
		return StopStatus, false
	case in.Mode == OptedIn:
		return RetryOptedIn, true
	case IsSafeMethod(in.Method):
		return RetrySafeMethod, true
	case in.Status != 0:
		return StopStatus, false
	default:
		return StopSentNotIdempotent, false
	}
}

// CallDeadline returns when a call that started at start must end, given the
// caller's own deadline (zero for none), and whether there is such a time.
func (p *Policy) CallDeadline(start, callerDeadline time.Time) (time.Time, bool) {
	d := callerDeadline
	if p.cfg.Deadline > 0 {
		own := start.Add(p.cfg.Deadline)
		if d.IsZero() || own.Before(d) {
			d = own
		}
	}
	return d, !d.IsZero()
}

func (p *Policy) deadline(in Input) (time.Time, bool) {
	return p.CallDeadline(in.Start, in.Deadline)
}

// backoff returns the full-jitter wait before retry number attempt: a point
// drawn by jitter from [0, min(MaxDelay, BaseDelay·2^(attempt-1))).
func (p *Policy) backoff(attempt int, jitter float64) time.Duration {
	window := p.cfg.MaxDelay
	if shift := attempt - 1; shift < 62 {
		if w := p.cfg.BaseDelay << shift; w > 0 && w>>shift == p.cfg.BaseDelay && w < window {
			window = w
		}
	}
	if jitter < 0 || jitter >= 1 {
		jitter = 0
	}
	return time.Duration(jitter * float64(window))
}
