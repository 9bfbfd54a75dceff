package rubicon

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Phase says how far a failed attempt got.
type Phase string

// The phases of a failed attempt, in the order an attempt passes them.
const (
	// NotSent: nothing reached the wire (DNS, dial, TLS, or a connection that
	// failed before any byte of the request was written).
	NotSent Phase = "not_sent"
	// Sent: bytes of the request were written, and no definitive answer came.
	Sent Phase = "sent"
	// Answered: a complete response arrived.
	Answered Phase = "answered"
)

// Outcome says whether an operation's side effect took place.
type Outcome string

// The outcomes of an operation.
const (
	// Applied: the side effect took place.
	Applied Outcome = "applied"
	// NotApplied: the side effect provably did not take place.
	NotApplied Outcome = "not_applied"
	// Unknown: the side effect may or may not have taken place. An operation
	// with this outcome is ambiguous and must not be retried automatically.
	Unknown Outcome = "unknown"
)

// Error reports a call that did not end in a usable response, with what is
// known about its effect. It is the error that rubicon's transport returns;
// use [IsAmbiguous] and [SafeToRetry] rather than inspecting it by hand where
// they suffice.
type Error struct {
	// Method is the request's HTTP method.
	Method string
	// URL is the request's URL without credentials and with every query
	// value redacted (see [RedactURL]).
	URL string
	// Phase is how far the last attempt got.
	Phase Phase
	// Outcome is what the caller may assume about the side effect, over
	// every attempt of the call: Unknown if any attempt may have applied it.
	Outcome Outcome
	// Attempts is the number of attempts made, the last one included.
	Attempts int
	// BytesWritten is the number of bytes the last attempt wrote to its
	// connection (0 when Phase is NotSent). Through TLS it counts encrypted
	// bytes.
	BytesWritten int64
	// StatusCode is the status of the last response, or 0 if none arrived.
	StatusCode int
	// RetryAfter is the wait the server asked for in its last response
	// (Retry-After or retry-after-ms), or 0.
	RetryAfter time.Duration
	// Reason says, in words, why no further attempt was made.
	Reason string
	// Err is the cause: the last attempt's error, the context's error, or
	// both joined.
	Err error
}

// Error describes the failure in one line: what was called, what is known of
// its effect, why it stopped, and the cause.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.URL)
	b.WriteString(": outcome ")
	b.WriteString(string(e.Outcome))
	b.WriteString(" after ")
	b.WriteString(strconv.Itoa(e.Attempts))
	if e.Attempts == 1 {
		b.WriteString(" attempt (")
	} else {
		b.WriteString(" attempts (")
	}
	switch e.Phase {
	case NotSent:
		b.WriteString("last attempt not sent")
	case Sent:
		fmt.Fprintf(&b, "last attempt sent %d bytes, no answer", e.BytesWritten)
	case Answered:
		fmt.Fprintf(&b, "last answer %d", e.StatusCode)
	default:
		b.WriteString("phase ")
		b.WriteString(string(e.Phase))
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", server asked to wait %s", e.RetryAfter)
	}
	b.WriteByte(')')
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, so that errors.Is(err, context.DeadlineExceeded)
// and similar checks see through the Error.
func (e *Error) Unwrap() error { return e.Err }

// IsAmbiguous reports whether err, or an error it wraps, is an [Error] whose
// outcome is [Unknown]: the request may have been applied. Such a call must
// not be repeated automatically; record it and have its truth checked.
func IsAmbiguous(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Outcome == Unknown
}

// SafeToRetry reports whether err, or an error it wraps, is an [Error] whose
// outcome is [NotApplied]: repeating the call cannot apply its effect twice.
// An error that is not an [Error] is not known to be safe, so SafeToRetry
// reports false for it.
func SafeToRetry(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Outcome == NotApplied
}

// RedactURL renders u for logs and errors: user information is dropped,
// every query value is replaced by "redacted" (names are kept, since a name
// rarely carries a secret and often explains the call), and the fragment is
// dropped.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := *u
	r.User = nil
	r.Fragment = ""
	r.RawFragment = ""
	if r.RawQuery != "" {
		r.RawQuery = redactQuery(r.RawQuery)
	}
	return r.String()
}

func redactQuery(raw string) string {
	var b strings.Builder
	for i, part := range strings.Split(raw, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, _, hasValue := strings.Cut(part, "=")
		b.WriteString(name)
		if hasValue {
			b.WriteString("=redacted")
		}
	}
	return b.String()
}
