// Package provider sends audio to speech-to-text APIs: one paid request per
// chunk, through the one client that may send it, with the outcome of
// every failure classified for the journal.
//
// [New] is the only way to a [Provider], and a Provider owns its clients:
// whoever transcribes through one gets the rule that a paid request is sent
// again only when it provably never left (retry.NotSentOnly), and the
// provider's one timeout around it.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// Names are the providers [New] knows: recall-archive's built-in sandbox,
// any OpenAI-compatible API, Deepgram and AssemblyAI.
var Names = []string{"sandbox", "openai", "deepgram", "assemblyai"}

// DefaultTimeout bounds a paid request when [Options] set no timeout.
const DefaultTimeout = 10 * time.Minute

// Options choose a provider and say how to reach it.
type Options struct {
	// Name is one of [Names].
	Name string
	// BaseURL is the API's root, such as https://api.openai.com.
	BaseURL string
	// Model is the model, such as whisper-1.
	Model string
	// APIKey is sent as the API asks; empty sends none. It comes from the
	// environment and is never logged.
	APIKey string
	// Project names the Deepgram project whose request log Lookup searches.
	Project string
	// Timeout bounds each paid request, every attempt, upload and poll
	// included, and each look-up; default DefaultTimeout. A paid request
	// that runs out of time may have been applied.
	Timeout time.Duration
	// PollEvery is the wait between polls of a job (AssemblyAI); default
	// 3 s.
	PollEvery time.Duration
}

// Provider is one speech-to-text API and the clients that reach it. It is
// safe for concurrent use.
type Provider struct {
	name, model string
	api         api
	// paid sends the requests of Transcribe: each is sent again only when
	// it provably never left, whatever its method.
	paid *http.Client
	// reads sends look-ups, which have no effect to repeat.
	reads   *http.Client
	timeout time.Duration
}

// api is what differs between providers: how a chunk is sent, and how a
// request is looked up (lookupAPI), given the clients to use.
type api interface {
	limits(model string) Limits
	transcribe(ctx context.Context, paid *http.Client, c Chunk) (Transcript, error)
}

// lookupAPI is an api whose records can be asked about one request.
type lookupAPI interface {
	lookup(ctx context.Context, reads *http.Client, key string, evidence journal.Evidence) (Found, error)
}

// New returns the provider o names, with its clients.
func New(o Options) (*Provider, error) {
	if o.BaseURL == "" || o.Model == "" {
		return nil, fmt.Errorf("provider %s: give a base URL and a model", o.Name)
	}
	a, err := apiOf(o)
	if err != nil {
		return nil, err
	}
	paid, err := paidClient()
	if err != nil {
		return nil, err
	}
	reads, err := transport.NewClient(transport.Options{})
	if err != nil {
		return nil, err
	}
	p := &Provider{name: o.Name, model: o.Model, api: a, paid: paid, reads: reads, timeout: o.Timeout}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	return p, nil
}

// LimitsOf returns what the provider name accepts in one request with
// model, as [Provider.Limits] does, without making the provider: for
// pricing a batch before it is sent.
func LimitsOf(name, model string) (Limits, error) {
	a, err := apiOf(Options{Name: name, Model: model})
	if err != nil {
		return Limits{}, err
	}
	return a.limits(model), nil
}

// apiOf returns the api of the provider o names.
func apiOf(o Options) (api, error) {
	var a api
	switch o.Name {
	case "sandbox":
		a = &sandbox{openAI{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, tagHeader: "X-Recall-Key"}}
	case "openai":
		a = &openAI{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey}
	case "deepgram":
		a = &deepgram{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, project: o.Project}
	case "assemblyai":
		a = &assemblyAI{baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, pollEvery: o.PollEvery}
	default:
		return nil, fmt.Errorf("unknown provider %q: use %s", o.Name, strings.Join(Names, ", "))
	}
	return a, nil
}

// paidClient returns the client of paid requests: rubicon's transport,
// sending each request again only when it provably never left
// (retry.NotSentOnly), whatever its method, since an upload or a poll in
// the middle of a paid request is no freer to repeat than the request.
func paidClient() (*http.Client, error) {
	var ops []transport.Operation
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		ops = append(ops, transport.Operation{Pattern: m + " /{path...}", Mode: retry.NotSentOnly})
	}
	return transport.NewClient(transport.Options{Operations: ops})
}

// Name returns the provider's name, one of [Names].
func (p *Provider) Name() string { return p.name }

// Model returns the model.
func (p *Provider) Model() string { return p.model }

// Limits returns what the provider accepts in one request.
func (p *Provider) Limits() Limits { return p.api.limits(p.model) }

// Timeout returns the bound on each paid request.
func (p *Provider) Timeout() time.Duration { return p.timeout }

// Transcribe makes the chunk's one paid request, and returns the
// transcript or an error that [Report] classifies. It ends by the
// provider's timeout.
func (p *Provider) Transcribe(ctx context.Context, c Chunk) (Transcript, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	// Each request is one call of the journal's, which alone says what
	// may be sent again; the transport is told so.
	ctx = transport.NewCall(ctx)
	return p.api.transcribe(ctx, p.paid, c)
}

// KeepsRecords reports whether the provider's records can be asked about
// one request, through Lookup.
func (p *Provider) KeepsRecords() bool {
	_, ok := p.api.(lookupAPI)
	return ok
}

// Lookup asks the provider's records about the request with the journal
// key, given the evidence recorded while it was sent. It ends by the
// provider's timeout.
func (p *Provider) Lookup(ctx context.Context, key string, evidence journal.Evidence) (Found, error) {
	l, ok := p.api.(lookupAPI)
	if !ok {
		return Found{}, fmt.Errorf("%s keeps no record that can be looked up per request", p.name)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return l.lookup(ctx, p.reads, key, evidence)
}

// Found is what a provider's records say about one request.
type Found struct {
	Charged   bool
	RequestID string
	Cost      ledger.Amount
	// Transcript is the answer the provider kept, if it keeps them.
	Transcript *Transcript
}

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

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// call sends req and returns the body of a successful answer and the
// provider's request id (from the idHeader), or an *HTTPError for another
// status. A body that breaks off after a success status is an error of its
// own: the request was processed, so the outcome is not a refusal.
func call(client *http.Client, req *http.Request, name, idHeader string) ([]byte, string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	reqID := resp.Header.Get(idHeader)
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, reqID, fmt.Errorf("%s: reading the answer (request %s): %w", name, reqID, err)
	}
	if resp.StatusCode/100 != 2 {
		he := &HTTPError{Provider: name, Method: req.Method, Status: resp.StatusCode, RequestID: reqID, Message: errorMessage(data)}
		if d, ok := retry.ParseRetryAfter(resp.Header, time.Now()); ok {
			he.RetryAfter = d
		}
		return nil, reqID, he
	}
	return data, reqID, nil
}

// errorMessage extracts {"error":{"message":...}}, or a short excerpt.
func errorMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
