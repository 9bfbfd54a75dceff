package retry

import (
	"net/http"

	"github.com/rubicon-go/rubicon"
)

// Result is how one attempt of a request ended, as far as its effect is
// concerned: what [Outcome] judges.
type Result struct {
	// Method is the request's HTTP method ("" is GET).
	Method string
	// Mode is how the operation may be retried. It matters only for a safe
	// method: in [NotSentOnly] mode a GET is taken to have an effect (a GET
	// that costs money), so its answers are judged as a write's.
	Mode Mode
	// Phase is how far the attempt got.
	Phase rubicon.Phase
	// Status is the answer's status when Phase is Answered.
	Status int
	// NotProcessed reports that the API declares that it sends Status only
	// for requests it did not process ([Config.NotProcessedStatuses]).
	NotProcessed bool
}

// Outcome says what an attempt proves about the effect of its request. It
// is rubicon's one rule for it ("what an answer proves"); the transport, the
// journal and the products all ask it:
//
//	not sent (proven)                    not applied
//	sent, no answer                      unknown
//	2xx, 101, 303 See Other              applied
//	307, 308                             not applied here (same request, elsewhere)
//	408, 429, every other 4xx            not applied (the request was refused)
//	a status the API declares
//	  "not processed"                    not applied
//	301, 302, other 3xx, 5xx, other      unknown
//
// A read (a safe method, GET HEAD OPTIONS TRACE, outside [NotSentOnly] mode)
// has no effect to apply: every ending but a success is not applied for it.
// Retry-After changes when a retry may happen, never what an answer proved,
// so Outcome does not look at it.
func Outcome(r Result) rubicon.Outcome {
	read := IsSafeMethod(r.Method) && r.Mode != NotSentOnly
	switch r.Phase {
	case rubicon.NotSent:
		return rubicon.NotApplied
	case rubicon.Answered:
	default:
		if read {
			return rubicon.NotApplied
		}
		return rubicon.Unknown
	}
	s := r.Status
	switch {
	case s >= 200 && s < 300, s == http.StatusSwitchingProtocols, s == http.StatusSeeOther:
		return rubicon.Applied
	case read:
		return rubicon.NotApplied
	case s == http.StatusTemporaryRedirect, s == http.StatusPermanentRedirect:
		return rubicon.NotApplied
	case s >= 400 && s < 500, r.NotProcessed:
		return rubicon.NotApplied
	}
	return rubicon.Unknown
}

// Outcome is [Outcome] with the statuses that the policy declares "not
// processed" ([Config.NotProcessedStatuses]).
func (p *Policy) Outcome(r Result) rubicon.Outcome {
	if r.Phase == rubicon.Answered && p.notProcessed.has(r.Status) {
		r.NotProcessed = true
	}
	return Outcome(r)
}
