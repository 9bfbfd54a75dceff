// Package provider sends audio to speech-to-text APIs: one paid request per
// chunk, through rubicon's boundary-aware client, with the outcome of every
// failure classified for the journal.
package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
)

// Chunk is one piece of audio to transcribe.
type Chunk struct {
	// Key is the journal operation's key; providers that accept a tag send
	// it, so that a later look-up can find the request.
	Key      string
	Path     string
	Size     int64
	Duration time.Duration
	// Note, if set, records evidence durably before the provider goes on:
	// an upload URL before the paid request that uses it, a job id as soon
	// as it is known.
	Note func(journal.Evidence) error
}

// note calls c.Note if it is set.
func (c Chunk) note(ev journal.Evidence) error {
	if c.Note == nil {
		return nil
	}
	return c.Note(ev)
}

// Segment is a timed piece of a transcript.
type Segment struct {
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	Text  string        `json:"text"`
}

// Transcript is what a provider returned for a chunk.
type Transcript struct {
	Text     string        `json:"text"`
	Language string        `json:"language,omitempty"`
	Duration time.Duration `json:"duration"`
	Segments []Segment     `json:"segments"`
	// RequestID is the provider's id for the request, kept as evidence.
	RequestID string `json:"request_id,omitempty"`
}

// Limits bound what a provider accepts in one request.
type Limits struct {
	MaxBytes    int64
	MaxDuration time.Duration // 0: no limit beyond MaxBytes
}

// Provider transcribes chunks. Transcribe makes exactly one paid request.
type Provider interface {
	Name() string
	Model() string
	Limits() Limits
	Transcribe(ctx context.Context, c Chunk) (Transcript, error)
}

// JobError is a provider's job that ended in failure; providers do not
// charge for those.
type JobError struct {
	Provider, ID, Message string
}

// Error names the provider, the job and the failure.
func (e *JobError) Error() string {
	return fmt.Sprintf("%s job %s failed: %s", e.Provider, e.ID, e.Message)
}

// HTTPError is an answer other than success.
type HTTPError struct {
	Provider string
	// Method is the method of the request that got the answer.
	Method    string
	Status    int
	Message   string
	RequestID string
	// RetryAfter is the wait the provider asked for, if any.
	RetryAfter time.Duration
}

// Error names the provider, the status and the message.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.Provider, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

// AcceptedError is a failure after the provider accepted the paid
// request (it answered with a job id, say) and before its result came
// back: the request was applied, or may still be, so the outcome is
// unknown until the job is looked up.
type AcceptedError struct {
	Provider, ID string
	Err          error
}

// Error names the provider, the job and the failure.
func (e *AcceptedError) Error() string {
	return fmt.Sprintf("%s accepted job %s, then: %v", e.Provider, e.ID, e.Err)
}

// Unwrap returns the cause.
func (e *AcceptedError) Unwrap() error { return e.Err }

// LocalError is a failure before any request was sent: reading the chunk,
// building the request. It is safe to retry.
type LocalError struct{ Err error }

// Error is the cause's message.
func (e *LocalError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *LocalError) Unwrap() error { return e.Err }

// Report classifies the outcome of a Transcribe call for the journal, by
// rubicon's rule for what an answer proves ([retry.Outcome]), the paid
// request being one that costs money whatever its method:
//   - success: applied;
//   - a failure before the boundary (a LocalError, or proven by the
//     transport): failed_safe;
//   - a job that the provider reports failed: not_applied (providers do not
//     charge for those);
//   - an answer that refused the request (4xx, 429 included, 307, 308):
//     not_applied;
//   - an answer that may have been processed (5xx, 301, 302), one that was
//     processed without a transcript coming back (303), a failure after the
//     provider accepted the job, or no answer: ambiguous.
func Report(worker string, err error) journal.Report {
	if err == nil {
		return journal.Report{Worker: worker, To: journal.Applied}
	}
	var le *LocalError
	if errors.As(err, &le) {
		return journal.Report{Worker: worker, To: journal.FailedSafe, Phase: rubicon.NotSent, Detail: le.Error()}
	}
	var je *JobError
	if errors.As(err, &je) {
		return journal.Report{Worker: worker, To: journal.NotApplied, Phase: rubicon.Answered, Detail: je.Error(),
			Evidence: journal.Evidence{"provider_job_id": je.ID}}
	}
	var ae *AcceptedError
	if errors.As(err, &ae) {
		// Whatever failed next, a later request's answer says nothing of
		// the paid one, which was accepted.
		return journal.Report{Worker: worker, To: journal.Ambiguous, Phase: rubicon.Answered, Detail: ae.Error(),
			Evidence: journal.Evidence{"provider_job_id": ae.ID}}
	}
	var he *HTTPError
	if errors.As(err, &he) {
		r := journal.Report{Worker: worker, Phase: rubicon.Answered, Detail: he.Error(),
			Evidence: journal.Evidence{"status": he.Status}}
		if he.RequestID != "" {
			r.Evidence["provider_request_id"] = he.RequestID
		}
		outcome := retry.Outcome(retry.Result{Method: he.Method, Mode: retry.NotSentOnly, Phase: rubicon.Answered, Status: he.Status})
		r.To = journal.StateOf(outcome)
		if r.To == journal.Applied {
			// Processed, but the transcript did not come back with it.
			r.To = journal.Ambiguous
			r.Detail += ": the request was processed, but no transcript came back"
		}
		return r
	}
	return journal.ReportCall(worker, nil, err)
}
