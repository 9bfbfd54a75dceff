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
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// DefaultTimeout bounds a paid request when [Options] set no timeout.
const DefaultTimeout = 10 * time.Minute

// Options choose a provider and say how to reach it.
type Options struct {
	// Name is one of [Names].
	Name string
	// BaseURL is the API's root, such as https://api.openai.com/v1 (with
	// or without /v1).
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
	// Speakers asks the provider to label who speaks each segment: 0 does
	// not, SpeakersUnknown does without a count, and n > 0 expects n
	// speakers, where the provider takes a count. A provider that labels
	// no speakers refuses any but 0.
	Speakers int
	// Hints are sent as the provider takes them; one it cannot take, or
	// past its documented limits, is refused by New.
	Hints Hints
}

// Hints tell the provider what the audio holds, each mapped to the
// provider's own parameter (see Registration.Hints).
type Hints struct {
	// Language is the audio's language, such as "en" or "pt-BR"; empty
	// leaves it to the provider.
	Language string
	// Prompt is text that guides the transcription: context, spelling,
	// style.
	Prompt string
	// Vocabulary are words and phrases the audio holds: names, terms.
	Vocabulary []string
}

// SpeakersUnknown is Options.Speakers for labels without a count.
const SpeakersUnknown = -1

// Provider is one speech-to-text API and the clients that reach it. It is
// safe for concurrent use.
type Provider struct {
	name, model string
	reg         Registration
	api         api
	// paid sends the requests of Transcribe: each is sent again only when
	// it provably never left, whatever its method.
	paid *http.Client
	// reads sends look-ups, which have no effect to repeat.
	reads   *http.Client
	timeout time.Duration
	// settings are o.Settings() of the options it was made with.
	settings string
	// language is the language asked for, if any: a transcript's where
	// the provider's answer names none.
	language string
}

// api is what differs between providers: how a chunk is sent, and how a
// request is looked up (lookupAPI), given the clients to use.
type api interface {
	transcribe(ctx context.Context, paid *http.Client, c Chunk) (recording.Transcript, error)
}

// lookupAPI is an api whose records can be asked about one request.
type lookupAPI interface {
	lookup(ctx context.Context, reads *http.Client, key string, evidence journal.Evidence) (Found, error)
}

// Check returns the registration of the provider o names, once it knows
// that the provider takes o's speakers and hints with o's model: what New
// checks first, for a caller that wants to refuse them before it reads a
// key.
func Check(o Options) (Registration, error) {
	reg, err := Lookup(o.Name)
	if err != nil {
		return Registration{}, err
	}
	if err := reg.CheckSpeakers(o.Model, o.Speakers); err != nil {
		return Registration{}, err
	}
	return reg, reg.CheckHints(o.Model, o.Hints)
}

// New returns the provider o names, with its clients.
func New(o Options) (*Provider, error) {
	if o.BaseURL == "" || o.Model == "" {
		return nil, fmt.Errorf("provider %s: give a base URL and a model", o.Name)
	}
	reg, err := Check(o)
	if err != nil {
		return nil, err
	}
	a := reg.api(o)
	paid, err := paidClient()
	if err != nil {
		return nil, err
	}
	reads, err := transport.NewClient(transport.Options{})
	if err != nil {
		return nil, err
	}
	p := &Provider{name: o.Name, model: o.Model, reg: reg, api: a, paid: paid, reads: reads, timeout: o.Timeout, settings: o.Settings(), language: LanguageTag(o.Hints.Language)}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	return p, nil
}

// LimitsOf returns what the provider name accepts in one request with
// model, as [Provider.Limits] does, without making the provider: for
// pricing a batch before it is sent.
func LimitsOf(name, model string) (Limits, error) {
	reg, err := Lookup(name)
	if err != nil {
		return Limits{}, err
	}
	return reg.limits(model), nil
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
func (p *Provider) Limits() Limits { return p.reg.limits(p.model) }

// Registration returns the provider's registration.
func (p *Provider) Registration() Registration { return p.reg }

// Timeout returns the bound on each paid request.
func (p *Provider) Timeout() time.Duration { return p.timeout }

// Transcribe makes the chunk's one paid request, and returns the
// transcript or an error that [Report] classifies. It ends by the
// provider's timeout.
func (p *Provider) Transcribe(ctx context.Context, c Chunk) (recording.Transcript, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	// Each request is one call of the journal's, which alone says what
	// may be sent again; the transport is told so.
	ctx = transport.NewCall(ctx)
	t, err := p.api.transcribe(ctx, p.paid, c)
	if err == nil && t.Language == "" {
		t.Language = p.language
	}
	return t, err
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

// UnprovenError is a look-up that proved nothing: the provider's records
// could not be read whole, for the whole time since the request was sent,
// in a shape recall recognises. The request stays ambiguous: absence from
// what was read is not proof that nothing was charged.
type UnprovenError struct {
	Provider string
	// Reason says what could not be read or recognised.
	Reason string
	// Check says what a person can look at to decide.
	Check string
}

// Error names the provider and the reason.
func (e *UnprovenError) Error() string {
	return fmt.Sprintf("%s: cannot prove whether the request was charged: %s", e.Provider, e.Reason)
}

// Unproven returns the UnprovenError in err, if there is one.
func Unproven(err error) (*UnprovenError, bool) {
	var ue *UnprovenError
	return ue, errors.As(err, &ue)
}

// skew is the margin a look-up's window gets on each side, for the
// difference between recall's clock and the provider's.
const skew = 5 * time.Minute

// maxPages bounds a look-up: past it, the records are too many to read.
const maxPages = 1000

// window returns the start of the time a look-up must read, from the
// moment the request was committed as sending (evidence "sent_at"), a
// margin before it.
func window(ev journal.Evidence) (time.Time, bool) {
	sent, ok := ev["sent_at"].(string)
	if !ok {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, sent)
	if err != nil {
		return time.Time{}, false
	}
	return at.Add(-skew).UTC(), true
}

// Found is what a provider's records say about one request, proven:
// charged, or (Charged false) read whole and not there, or refused.
type Found struct {
	Charged   bool
	RequestID string
	Cost      ledger.Amount
	// Transcript is the answer the provider kept, if it keeps them.
	Transcript *recording.Transcript
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
	Method string
	Status int
	// Message is the provider's message, from whichever of its documented
	// error shapes the answer has; Code its error code, if it gives one
	// (OpenAI's error.code or error.type, Deepgram's err_code or
	// category).
	Message, Code string
	RequestID     string
	// RetryAfter is the wait the provider asked for, if any.
	RetryAfter time.Duration
}

// KeyRefused reports whether the provider refused the API key (401 or
// 403): every other request with it would be refused too.
func (e *HTTPError) KeyRefused() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// KeyRefused returns the provider's refusal of the API key if err holds
// one, however it is wrapped: the first 401 or 403 a paid call met.
func KeyRefused(err error) (*HTTPError, bool) {
	var he *HTTPError
	if errors.As(err, &he) && he.KeyRefused() {
		return he, true
	}
	return nil, false
}

// Error names the provider, the status and the message.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.Provider, e.Status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Code != "" && !strings.Contains(e.Message, e.Code) {
		msg += " (" + e.Code + ")"
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

// seconds is s seconds, to the nearest nanosecond: a time such as 0.9 s
// is not a float's 899.999999 ms, a millisecond early once shown.
func seconds(s float64) time.Duration { return in(s, time.Second) }

// in is f units, to the nearest nanosecond.
func in(f float64, unit time.Duration) time.Duration {
	return time.Duration(math.Round(f * float64(unit)))
}

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
		he := &HTTPError{Provider: name, Method: req.Method, Status: resp.StatusCode, RequestID: reqID}
		he.Message, he.Code = errorMessage(data)
		if he.RequestID == "" {
			he.RequestID = errorRequestID(data)
		}
		if d, ok := retry.ParseRetryAfter(resp.Header, time.Now()); ok {
			he.RetryAfter = d
		}
		return nil, reqID, he
	}
	return data, reqID, nil
}

// errorShapes are the error bodies the providers document: OpenAI's error
// object (also LocalAI's and Groq's), whisper.cpp's and AssemblyAI's
// {"error": "..."} (AssemblyAI's with "status": "error"), and Deepgram's
// legacy {"err_code", "err_msg"} and modern {"category", "message"}.
type errorShapes struct {
	Error     json.RawMessage `json:"error"`
	ErrCode   string          `json:"err_code"`
	ErrMsg    string          `json:"err_msg"`
	Category  string          `json:"category"`
	Message   string          `json:"message"`
	Details   string          `json:"details"`
	RequestID string          `json:"request_id"`
}

// errorMessage reads the message and code of an error answer in any of
// the documented shapes, or a short excerpt of an answer in none.
func errorMessage(data []byte) (message, code string) {
	var e errorShapes
	if json.Unmarshal(data, &e) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var text string
		switch {
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			code = obj.Type
			var c string
			if json.Unmarshal(obj.Code, &c) == nil && c != "" {
				code = c
			}
			return obj.Message, code
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &text) == nil && text != "":
			return text, ""
		case e.ErrMsg != "":
			return e.ErrMsg, e.ErrCode
		case e.Message != "":
			if e.Details != "" {
				return e.Message + ": " + e.Details, e.Category
			}
			return e.Message, e.Category
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s, ""
}

// errorRequestID reads the request id an error answer carries (Deepgram's).
func errorRequestID(data []byte) string {
	var e errorShapes
	json.Unmarshal(data, &e)
	return e.RequestID
}
