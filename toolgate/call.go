package toolgate

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/time/rate"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/transport"
)

// JournalKind is the kind of the journal's toolgate calls.
const JournalKind = "toolgate"

// Caller calls the upstream API for tools.
type Caller struct {
	cat  *Catalog
	base *url.URL
	// bases are where the tools whose operations have servers of their
	// own are called; any other is called at base.
	bases   map[*Tool]*url.URL
	client  *http.Client
	auth    config.Auth // upstream.auth, whose header no argument may set
	creds   *credentials
	redact  *redactor
	journal *journal.Journal // nil: calls are not journaled
	worker  string
	metrics *Metrics     // nil: calls are not counted
	log     *slog.Logger // nil: calls are not logged
	limits  map[*Tool]*rate.Limiter

	mu      sync.Mutex
	schemas map[string]*jsonschema.Resolved // compiled on a tool's first call
}

// NewCaller returns a caller for cat's tools against the upstream: base
// (--upstream), else up.URL, else the document's server that up chooses,
// with its variables; a relative server of the document is resolved
// against base. Calls authenticate as each tool's operation requires
// (Tool.Auth): with up.Schemes' credentials, scheme by scheme, and with
// up.Auth on every request. Secrets are read once, here, from the
// environment (getenv) or from files only their owner may read. The
// journal, if not nil, records every call to a tool that is not read
// only, so that an ambiguous call is kept and an identical one refused.
//
// The credentials go only to the upstream's origin (scheme, host and
// port): they are added to each request right before it is sent there,
// never to one bound elsewhere, and an operation that the document serves
// on another origin is called without them. An OAuth2 client's secret
// goes only to its token endpoint, which is an origin of its own; a
// document's token endpoint elsewhere than the upstream is used only if
// the configuration names it. A tool whose operation requires a scheme
// that nothing is configured for is called without its credential
// ([Catalog.MissingCredentials] finds them). Redirects are followed for
// read tools within the origin only; any other redirect is the call's
// answer. Answers that echo a secret or a token have it redacted. client,
// if not nil, provides the transport and the timeout; its redirect policy
// and cookie jar are not used.
func NewCaller(cat *Catalog, base string, up config.Upstream, getenv func(string) string, client *http.Client, j *journal.Journal) (*Caller, error) {
	if base == "" {
		base = up.URL
	}
	if up.Auth.Type == "" {
		up.Auth.Type = config.AuthNone
	}
	u, server, err := upstreamOf(cat.Doc, base, up, sendsSecrets(cat, up))
	if err != nil {
		return nil, err
	}
	if err := checkOrigins(cat, up, u); err != nil {
		return nil, err
	}
	c := &Caller{cat: cat, base: u, auth: up.Auth, journal: j, worker: journal.ProcessWorker(), schemas: map[string]*jsonschema.Resolved{},
		bases: map[*Tool]*url.URL{}, limits: newLimits(cat)}
	for _, t := range cat.Tools {
		b, err := operationBase(t.op, u, server, up)
		if err != nil {
			return nil, err
		}
		if b != nil {
			c.bases[t] = b
		}
	}
	var derived []string
	if c.creds, derived, err = newCredentials(cat, up, u, getenv); err != nil {
		return nil, err
	}
	secrets := make([]string, 0, len(c.creds.secrets))
	for _, s := range c.creds.secrets {
		secrets = append(secrets, s)
	}
	c.redact = newRedactor(secrets, derived)
	if client == nil {
		if client, err = transport.NewClient(transport.Options{Observe: observe}); err != nil {
			return nil, err
		}
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.client = &http.Client{Transport: &authTransport{base: rt}, CheckRedirect: c.checkRedirect, Timeout: client.Timeout}
	return c, nil
}

// CheckUpstream checks, before anything is opened, that NewCaller can
// place cat's upstream with base and up: its URL, the document's servers
// and their variables.
func CheckUpstream(cat *Catalog, base string, up config.Upstream) error {
	if base == "" {
		base = up.URL
	}
	_, _, err := upstreamOf(cat.Doc, base, up, sendsSecrets(cat, up))
	return err
}

// sendsSecrets says where the credentials that calls of cat's tools carry
// under up come from ("$TOKEN"), or "" when they carry none.
func sendsSecrets(cat *Catalog, up config.Upstream) string {
	if up.Auth.Type != config.AuthNone && up.Auth.Type != "" {
		return from(up.Auth)
	}
	for _, t := range cat.Tools {
		for _, u := range t.Auth.Uses {
			if u.Auth.Type != config.AuthNone {
				return from(u.Auth)
			}
		}
	}
	return ""
}

// from says where a's credential comes from.
func from(a config.Auth) string {
	if a.Type == config.AuthForward {
		return "the MCP client's token"
	}
	return a.Secret()
}

// baseOf returns where calls of t go.
func (c *Caller) baseOf(t *Tool) *url.URL {
	if b := c.bases[t]; b != nil {
		return b
	}
	return c.base
}

// Result is what a tool call returns to the agent.
type Result struct {
	Text    string
	IsError bool
	// Structured is the answer as JSON, when it is an object.
	Structured map[string]any
	// Media is an answer that is not text (an image, audio, a file),
	// which Text then describes; nil for text.
	Media *Media
	// input is the question for a person that goes back to the client
	// in place of an answer, when the client's protocol asks that way.
	input *inputRequest
	// Meta is the result's _meta: set on a replay (ReplayedMeta).
	Meta map[string]any
}

// Media is an answer that is not text: its media type, its bytes, and
// what it answers, the request's URL without its query.
type Media struct {
	Type string
	Data []byte
	URI  string
}

// forbiddenHeaders can never be set from arguments, whatever the document
// declares: they would change where the request goes, how it is framed,
// or whose credentials it carries.
var forbiddenHeaders = map[string]bool{"Host": true, "Authorization": true, "Proxy-Authorization": true, "Cookie": true,
	"Content-Length": true, "Content-Type": true, "Transfer-Encoding": true, "Connection": true, "Te": true, "Upgrade": true,
	"Idempotency-Key": true, "Forwarded": true, "X-Forwarded-For": true, "X-Forwarded-Host": true, "X-Forwarded-Proto": true, "X-Real-Ip": true}

// ForbiddenHeader reports whether an argument may not set header name.
func ForbiddenHeader(name string, auth config.Auth) bool {
	h := http.CanonicalHeaderKey(name)
	return forbiddenHeaders[h] || strings.HasPrefix(h, "Proxy-") || (auth.Type == "header" && h == http.CanonicalHeaderKey(auth.Header))
}

// Call makes one call of t, a tool of the caller's catalog as
// [Catalog.Callable] finds it, with the arguments args (a JSON object).
// It is the one path of every call: it checks the arguments, builds the
// request, asks a person through person when the tool needs a
// confirmation (a nil person refuses such a call), records the call when
// the tool is journaled (refusing it while the guard holds it back),
// sends it, decides what the ending proves, and records that. The result
// never holds the upstream's secret.
func (c *Caller) Call(ctx context.Context, t *Tool, args json.RawMessage, person Confirmer) Result {
	start := time.Now()
	res, info := c.call(ctx, t, args, person)
	c.observed(t, info, time.Since(start))
	if info.redact == nil {
		info.redact = c.redact
	}
	return info.redact.result(res)
}

// Outcomes of a call, as metrics and logs name them: the journal's words
// for a call that was sent or tried (applied, not_applied, ambiguous,
// failed_safe), and why one was not.
const (
	// OutcomeRefused: not sent; the guard held it back, or a person did
	// not accept it.
	OutcomeRefused = "refused"
	// OutcomeInvalid: not sent; the arguments or the request were wrong.
	OutcomeInvalid = "invalid"
	// OutcomeNotRecorded: not sent; the journal could not record it.
	OutcomeNotRecorded = "not_recorded"
	// OutcomeNoCredentials: not sent; its credentials could not be had
	// (a token endpoint that failed, no client token to forward).
	OutcomeNoCredentials = "no_credentials"
	// OutcomeReplayed: not sent; an identical call was applied within the
	// tool's replay window, and its answer was given again.
	OutcomeReplayed = "replayed"
)

// callInfo is what a call did, for metrics and logs.
type callInfo struct {
	outcome string
	key     string
	stats   callStats
	// unrecorded is why the journal could not record the call's outcome.
	unrecorded error
	// redact redacts the call's result: the caller's secrets and the
	// call's tokens.
	redact *redactor
}

func (c *Caller) call(ctx context.Context, t *Tool, args json.RawMessage, person Confirmer) (Result, callInfo) {
	args, exact, refused := c.check(t, args)
	if refused != nil {
		return *refused, callInfo{outcome: OutcomeInvalid}
	}
	auth, err := c.authorize(ctx, t)
	if err != nil {
		return errorResult("the upstream's credentials could not be had: %v. Nothing was sent.", err), callInfo{outcome: OutcomeNoCredentials}
	}
	req, err := c.request(ctx, t, exact, auth)
	if err != nil {
		return errorResult("%v. Nothing was sent.", err), callInfo{outcome: OutcomeInvalid, redact: auth.redact}
	}
	if t.Confirm {
		// A person is not asked about a call its rate limit would refuse.
		if res := c.throttled(t, false); res != nil {
			return *res, callInfo{outcome: OutcomeRateLimited, redact: auth.redact}
		}
		if res, ok := c.confirm(ctx, t, req, exact, args, person, auth); !ok {
			return res, callInfo{outcome: OutcomeRefused, redact: auth.redact}
		}
		// A token may have aged while the person read: the credentials
		// are had again, to be added as the request leaves. The request
		// sent is the one the person was shown, built again only where
		// its body carries a credential that changed.
		fresh, err := c.authorize(ctx, t)
		if err != nil {
			return errorResult("the upstream's credentials could not be had: %v. Nothing was sent.", err), callInfo{outcome: OutcomeNoCredentials}
		}
		if !maps.Equal(fresh.fields, auth.fields) {
			if req, err = c.request(ctx, t, exact, fresh); err != nil {
				return errorResult("%v. Nothing was sent.", err), callInfo{outcome: OutcomeInvalid, redact: fresh.redact}
			}
		}
		auth = fresh
	}
	if res := c.throttled(t, true); res != nil {
		return *res, callInfo{outcome: OutcomeRateLimited, redact: auth.redact}
	}
	// The deadline starts now, once a person has answered if one was
	// asked: their time to read is not the upstream's time to answer.
	ctx, cancel := context.WithTimeout(ctx, t.Deadline)
	defer cancel()
	info := callInfo{redact: auth.redact}
	var sent journal.Operation
	if c.journals(t) {
		var refusal string
		sent, refusal, err = c.begin(ctx, t, exact, args, callOrigin(ctx))
		var replay *journal.ReplayError
		if errors.As(err, &replay) {
			return c.replayed(t, replay.Applied), callInfo{outcome: OutcomeReplayed, key: replay.Applied.Key, redact: auth.redact}
		}
		if err != nil {
			return errorResult("the call could not be recorded before sending (%v). Nothing was sent.", err), callInfo{outcome: OutcomeNotRecorded, redact: auth.redact}
		}
		if refusal != "" {
			return Result{IsError: true, Text: refusal}, callInfo{outcome: OutcomeRefused, redact: auth.redact}
		}
		info.key = sent.Key
		// The request starts before the lease it was committed under runs
		// out, or not at all.
		var cancel context.CancelFunc
		ctx, cancel = sent.Fence(ctx)
		defer cancel()
	}
	e := c.send(ctx, t, req, info.key, &info.stats, auth)
	state := outcome(t, e)
	if info.key != "" {
		info.unrecorded = c.finish(context.WithoutCancel(ctx), sent, state, e)
	}
	if errors.Is(e.err, context.DeadlineExceeded) {
		info.stats.deadline = true
	}
	info.outcome = string(state)
	return c.tell(t, e, state), info
}

// journals reports whether the calls of t are recorded and guarded.
func (c *Caller) journals(t *Tool) bool { return c.journal != nil && t.Journaled() }

// check parses and validates the arguments of a call of t. It returns
// them as given (an absent object made {}) and decoded with their numbers
// as written, or the result that refuses the call.
func (c *Caller) check(t *Tool, args json.RawMessage) (json.RawMessage, map[string]any, *Result) {
	refuse := func(r Result) (json.RawMessage, map[string]any, *Result) { return nil, nil, &r }
	if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || string(trimmed) == "null" {
		args = json.RawMessage("{}")
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil || a == nil {
		return refuse(errorResult("the arguments of %s must be a JSON object", t.Name))
	}
	schema, err := c.schema(t)
	if err != nil {
		return refuse(errorResult("%v. Nothing was sent.", err))
	}
	if err := schema.Validate(a); err != nil {
		return refuse(errorResult("%s", invalidArguments(t.Name, schema, a, err)))
	}
	// The request is built from the arguments with their numbers as
	// written: an ID of 19 digits must reach the upstream unchanged.
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var exact map[string]any
	if err := dec.Decode(&exact); err != nil {
		return refuse(errorResult("the arguments of %s must be a JSON object", t.Name))
	}
	return args, exact, nil
}

// send sends req, the request of a call of t journaled under key ("" if
// it is not), with the credentials auth, through rubicon's transport in
// the tool's retry mode, and returns how it ended. The transport's
// attempts are counted in stats.
func (c *Caller) send(ctx context.Context, t *Tool, req *http.Request, key string, stats *callStats, auth *callAuth) ending {
	switch {
	case t.Retry == retry.OptedIn:
		// One key for this tool call, sent on every attempt.
		if key == "" {
			key = "toolgate-" + rand.Text()
		}
		ctx = transport.WithIdempotencyKey(ctx, key)
	default:
		ctx = transport.WithMode(ctx, t.Retry)
	}
	// The journal says what one call is; the transport is told so, and
	// takes nothing else for a re-send of it.
	ctx = transport.NewCall(ctx)
	ctx = withRedirects(ctx, !t.Journaled())
	ctx = context.WithValue(ctx, statsKey{}, stats)
	ctx = withAuth(ctx, auth)
	resp, err := c.client.Do(req.WithContext(ctx))
	if err != nil {
		return ending{err: err, redact: auth.redact}
	}
	return c.read(resp, auth.redact)
}

// schema returns t's compiled input schema. Compiling every schema at
// start would cost as much as listing them all again, so each is compiled
// when its tool is first called.
func (c *Caller) schema(t *Tool) (*jsonschema.Resolved, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs := c.schemas[t.Name]; rs != nil {
		return rs, nil
	}
	s, err := c.cat.InputSchema(t)
	if err != nil {
		return nil, err
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(s, &schema); err != nil {
		return nil, fmt.Errorf("tool %s: its input schema: %v", t.Name, err)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: its input schema: %v", t.Name, err)
	}
	c.schemas[t.Name] = rs
	return rs, nil
}

// Base returns the upstream's base URL.
func (c *Caller) Base() *url.URL { return c.base }

// identity is what a call of a tool acts on, for the guard.
type identity struct {
	// subject is shared by every call of the tool on the same resource.
	subject string
	// call is shared only by calls with the same arguments too.
	call string
	// resource names the resource for messages: the method, the path and
	// its parameters' values.
	resource string
}

// identify returns the identity of a call of t with the arguments a.
// The upstream is part of it: one journal may serve several APIs whose
// tools share names.
func (c *Caller) identify(t *Tool, a map[string]any) identity {
	var params []string
	args, _, _ := arguments(t.op)
	for _, arg := range args {
		if arg.param.In != "path" {
			continue
		}
		if v, ok := a[arg.name]; ok {
			params = append(params, arg.name+"="+text(v))
		}
	}
	sort.Strings(params)
	prefix := c.base.String() + "\x00" + t.Name + "\x00"
	norm, _ := json.Marshal(a) // maps marshal with sorted keys
	resource := t.Method + " " + t.Path
	if len(params) > 0 {
		resource += " (" + strings.Join(params, ", ") + ")"
	}
	return identity{
		subject:  "toolgate/" + t.Name + "/" + digest(prefix+strings.Join(params, "\x00")),
		call:     digest(prefix + string(norm)),
		resource: resource,
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// begin records a call of a tool that changes state, refusing it while a
// call that the tool's guard holds it back for is in flight or ambiguous,
// and returning a *journal.ReplayError when an identical call from the
// same origin was applied within the tool's replay window. The journal
// decides both, in the transaction of the sending commit, through the
// call's guard and replay key: every server that shares the journal
// refuses and replays alike.
func (c *Caller) begin(ctx context.Context, t *Tool, a map[string]any, args json.RawMessage, o origin) (sent journal.Operation, refusal string, err error) {
	id := c.identify(t, a)
	// An open call recorded before the journal kept guards holds none;
	// looking first finds it, and saves a write when a call is open.
	if refusal, err := c.held(ctx, t, id); err != nil || refusal != "" {
		return journal.Operation{}, refusal, err
	}
	key := id.subject + "/" + strings.ToLower(rand.Text()[:10])
	ev := journal.Evidence{"tool": t.Name, "method": t.Method, "path": t.Path, "resource": id.resource, "call": id.call,
		"upstream": rubicon.RedactURL(c.base), "arguments": storable(snippet(c.redact.string(string(args))))}
	if t.Confirm {
		ev["confirmed"] = "a person accepted it through the client"
	}
	op := journal.NewOperation{Key: key, Kind: JournalKind, Subject: id.subject, Evidence: ev, Guard: guard(t, id)}
	if t.Replay > 0 {
		// A call sent again on purpose is replayed itself if re-issued.
		op.Replay, op.ReplayWithin = replayKey(id, o.principal), t.Replay
		if o.again {
			op.ReplayWithin = 0
			ev["again"] = "the client asked for a separate effect (" + AgainMeta + ")"
		}
	}
	sent, err = c.journal.Start(ctx, op, c.worker)
	var held *journal.GuardError
	if errors.As(err, &held) {
		return journal.Operation{}, c.refusal(t, id, held.Open), nil
	}
	if err != nil {
		return journal.Operation{}, "", err
	}
	return sent, "", nil
}

// guard is what a call of t with identity id holds while it is open: the
// resource, or, for a tool guarded by identical calls, the call.
func guard(t *Tool, id identity) string {
	if t.Guard == config.GuardIdentical {
		return id.subject + "/" + id.call
	}
	return id.subject
}

// held returns why a call of t with identity id would be refused, if an
// open call holds it back: a look before a person is asked, which the
// journal's guard then decides for good.
func (c *Caller) held(ctx context.Context, t *Tool, id identity) (refusal string, err error) {
	open, err := c.journal.List(ctx, journal.Filter{Kind: JournalKind, SubjectPrefix: id.subject,
		States: []journal.State{journal.Pending, journal.Sending, journal.Ambiguous}})
	if err != nil {
		return "", err
	}
	for _, op := range open {
		if op.Subject != id.subject || (t.Guard == config.GuardIdentical && op.Evidence["call"] != id.call) {
			continue
		}
		return c.refusal(t, id, op), nil
	}
	return "", nil
}

// refusal tells the agent why its call was not sent and what to do.
func (c *Caller) refusal(t *Tool, id identity, open journal.Operation) string {
	same := "a call to " + t.Name + " on the same resource, " + id.resource + ","
	if t.Guard == config.GuardIdentical || open.Evidence["call"] == id.call {
		same = "an identical call to " + t.Name + " (same arguments)"
	}
	if open.State != journal.Ambiguous {
		return fmt.Sprintf("REFUSED: %s is in flight. Nothing was sent. Wait for its result instead of calling again.", same)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "REFUSED: %s made at %s has an unknown outcome and may have been applied. Nothing was sent: "+
		"another call could apply the change twice, or on top of one nobody has checked.\n", same, open.Created.UTC().Format(time.RFC3339))
	if checks := c.readersFor(t); len(checks) > 0 {
		fmt.Fprintf(&b, "Check whether it was applied with %s; ", strings.Join(checks, " or "))
	} else {
		b.WriteString("Ask a person to check in the upstream system whether it was applied; ")
	}
	key := output.ShellQuote(open.Key)
	fmt.Fprintf(&b, "a person then settles it with what they found, running one of:\n"+
		"  toolgate resolve %s --applied --note \"what was checked\"\n"+
		"  toolgate resolve %s --not-applied --note \"what was checked\"", key, key)
	return b.String()
}

// maxAnswer bounds the answer text handed to the agent.
const maxAnswer = 100 << 10

// ending is how a call that was sent ended: the transport's error, or
// the upstream's answer as read.
type ending struct {
	err error // the transport's error; the fields below are then empty

	status    int
	data      []byte // the answer's body, cut at maxAnswer
	text      string // the same, redacted, marked when cut
	truncated bool
	broken    bool     // the body broke off while it was read
	location  *url.URL // where a redirect points, if it says
	requestID string   // the upstream's id of the request, if it gave one
	// retryAfter is the wait the answer asks for, if asksWait.
	retryAfter time.Duration
	asksWait   bool
	// media is an answer that is not text; data and text are then empty.
	media *mediaAnswer
	// redact removes the caller's secrets and the call's tokens.
	redact *redactor
}

// read reads the upstream's answer, redacting it with red.
func (c *Caller) read(resp *http.Response, red *redactor) ending {
	defer resp.Body.Close()
	// Read past the limit by the longest form of the secret, so that one
	// that straddles the limit is cut whole and redacted, never in part.
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(max(maxAnswer, maxMedia)+1+red.longest())))
	e := ending{status: resp.StatusCode, broken: err != nil, redact: red}
	if m := readMedia(resp, data, red); m != nil {
		e.media = m
	} else {
		e.truncated = len(data) > maxAnswer
		if e.truncated {
			data = data[:red.cut(data, maxAnswer)]
		}
		e.data, e.text = data, red.string(string(data))
		if e.truncated {
			e.text += "\n[answer cut at 100 KiB]"
		}
	}
	if loc, err := resp.Location(); err == nil {
		e.location = loc
	}
	e.requestID = requestID(resp.Header)
	e.retryAfter, e.asksWait = retry.ParseRetryAfter(resp.Header, time.Now())
	return e
}

// requestIDHeaders are the headers in which APIs commonly name the
// request they answered, which their support can look up.
var requestIDHeaders = []string{"X-Request-Id", "Request-Id", "X-Correlation-Id", "X-Github-Request-Id", "X-Amzn-Requestid", "X-Amz-Request-Id"}

// requestID returns the upstream's id of the request it answered, cut to
// a sane length, or "".
func requestID(h http.Header) string {
	for _, name := range requestIDHeaders {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return truncate(strings.Map(func(r rune) rune {
				if r < ' ' || r == 0x7f {
					return -1
				}
				return r
			}, v), 200)
		}
	}
	return ""
}

// outcome decides what the ending e of a call of t proves: the state the
// journal records, from which the agent is told. It is toolgate's one
// decision of a call's outcome: an answer is judged by rubicon's one rule
// (retry.Outcome), a journaled tool as a write and any other as a read,
// for which every ending but a success applied nothing.
func outcome(t *Tool, e ending) journal.State {
	switch {
	case e.err != nil && rubicon.IsAmbiguous(e.err):
		return journal.Ambiguous
	case e.err != nil && rubicon.SafeToRetry(e.err):
		return journal.FailedSafe
	case e.err != nil:
		return journal.Ambiguous // nothing shows where it failed
	case e.broken && e.status/100 == 2:
		return journal.Ambiguous // the answer broke off: applied, or not, unknown
	}
	r := retry.Result{Method: t.Method, Mode: t.Retry, Phase: rubicon.Answered, Status: e.status}
	switch {
	case !t.Journaled():
		r.Method, r.Mode = http.MethodGet, retry.ByMethod // a read: it has no effect to apply
	case retry.IsSafeMethod(t.Method):
		r.Mode = retry.NotSentOnly // a GET that is more than a read is judged as a write
	}
	return journal.StateOf(retry.Outcome(r))
}

// tell is the result that tells the agent what the ending e of a call of
// t proved (state), and what to do next.
func (c *Caller) tell(t *Tool, e ending, state journal.State) Result {
	if r, ok := e.upstreamLimited(); ok && (state == journal.NotApplied || state == journal.FailedSafe) {
		return r
	}
	switch state {
	case journal.Ambiguous:
		return c.ambiguous(t, c.unknownWhy(e))
	case journal.FailedSafe:
		return errorResult("the upstream API could not be reached, and nothing was sent (%s). You may call again.", reason(e.err))
	case journal.Applied:
		if e.status/100 == 3 {
			return Result{Text: fmt.Sprintf("The upstream API applied the call and points at its result: %s. %s", c.redirect(e), e.body())}
		}
		if e.media != nil {
			return e.media.result(e.status)
		}
		r := Result{Text: e.text}
		var m map[string]any
		if json.Unmarshal(e.data, &m) == nil && !e.truncated {
			r.Structured = m
		}
		return r
	}
	status := fmt.Sprintf("%d %s", e.status, http.StatusText(e.status))
	switch {
	case e.status/100 == 3 && !t.Journaled() && e.location != nil && !sameOrigin(e.location, c.baseOf(t)):
		return errorResult("the upstream API redirected the call: %s, which toolgate does not follow: redirects are followed only within the upstream's origin, where its credentials belong. Nothing was read. %s",
			c.redirect(e), e.body())
	case e.status/100 == 3 && !t.Journaled():
		return errorResult("the upstream API answered %s, which toolgate did not follow (no address, or more than 10 redirects). Nothing was read. %s",
			c.redirect(e), e.body())
	case e.status/100 == 3:
		return errorResult("the upstream API did not apply the call here: it answered %s, asking for the same request at that address. "+
			"toolgate does not repeat a call that changes state at another address. Nothing was applied; tell a person if the upstream has moved.", c.redirect(e))
	case e.status/100 == 4:
		return errorResult("the upstream API refused the call: %s: %s", status, e.body())
	}
	return errorResult("the upstream API failed: %s: %s", status, e.body())
}

// unknownWhy says why the ending e leaves a call's outcome unknown.
func (c *Caller) unknownWhy(e ending) string {
	switch {
	case e.err != nil && rubicon.IsAmbiguous(e.err):
		return "the request was sent and no answer came back"
	case e.err != nil:
		return "the call failed in a way that does not show whether it was applied"
	case e.status/100 == 2:
		return "the answer broke off while it was being read"
	case e.status/100 == 3:
		return fmt.Sprintf("the upstream API answered %s, which toolgate does not follow for a call that changes state, and which does not say whether it was applied", c.redirect(e))
	}
	return fmt.Sprintf("the upstream API answered %d %s, which does not say whether it was applied", e.status, http.StatusText(e.status))
}

// redirect describes a redirect that was not followed: its status and
// where it points, redacted.
func (c *Caller) redirect(e ending) string {
	to := "no address"
	if e.location != nil {
		to = c.location(e)
		if !sameOrigin(e.location, c.base) {
			to += ", another origin than the upstream's"
		}
	}
	return fmt.Sprintf("%d %s (to %s)", e.status, http.StatusText(e.status), to)
}

// location is where the answer e points, redacted, or "".
func (c *Caller) location(e ending) string {
	if e.location == nil {
		return ""
	}
	return e.redact.string(rubicon.RedactURL(e.location))
}

// ambiguous is the result that tells the agent, plainly, that the outcome
// is unknown, that it must not call again to retry, and how to check.
func (c *Caller) ambiguous(t *Tool, why string) Result {
	var b strings.Builder
	fmt.Fprintf(&b, "OUTCOME UNKNOWN: %s may or may not have been applied: %s.\n", t.Name, why)
	if t.Guard == config.GuardIdentical {
		b.WriteString("Do not call this tool again to retry: a second call could apply it twice, and an identical call is refused until this one is settled.\n")
	} else {
		b.WriteString("Do not call this tool again to retry: a second call could apply it twice, and calls of this tool on the same resource are refused until this one is settled.\n")
	}
	if checks := c.readersFor(t); len(checks) > 0 {
		fmt.Fprintf(&b, "To check whether it was applied, read the resource with %s.", strings.Join(checks, " or "))
	} else {
		b.WriteString("Ask a person to check in the upstream system whether it was applied.")
	}
	return Result{IsError: true, Text: b.String()}
}

// readersFor names the exposed read tools on t's resource: the same path,
// or the resource the path belongs to.
func (c *Caller) readersFor(t *Tool) []string {
	var out []string
	for _, o := range c.cat.Exposed() {
		if o.Method != "GET" || o == t {
			continue
		}
		if o.Path == t.Path || strings.HasPrefix(t.Path, o.Path+"/") && strings.HasSuffix(o.Path, "}") {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// recordTries bounds how often finish tries to record an outcome that the
// journal's store failed to take; it pauses up to recordPause between.
const (
	recordTries = 6
	recordPause = time.Second
)

// finish records how the call sent under sent ended: the state that e
// proves, with the upstream's status, request id and answer (redacted) as
// evidence. An answer that arrives after recovery declared the call's
// outcome unknown settles it all the same (the journal's late answer). A
// store that fails is tried again for a while; the error that remains is
// returned.
func (c *Caller) finish(ctx context.Context, sent journal.Operation, state journal.State, e ending) error {
	r := journal.Report{Worker: c.worker, To: state, Attempt: sent.Attempts}
	if e.err != nil {
		r.Detail, r.Phase = e.redact.string(e.err.Error()), rubicon.Sent // nothing shows where it failed
		var re *rubicon.Error
		if errors.As(e.err, &re) {
			r.Phase = re.Phase
			r.Evidence = journal.Evidence{"attempts": re.Attempts, "bytes_written": re.BytesWritten}
			if re.StatusCode != 0 {
				r.Evidence["status"] = re.StatusCode
			}
		}
	}
	if e.status != 0 {
		r.Evidence = journal.Evidence{"status": e.status}
		if e.requestID != "" {
			r.Evidence["provider_request_id"] = e.redact.string(e.requestID)
		}
		if e.text != "" {
			r.Evidence["answer"] = storable(snippet(e.text))
		}
		if sent.Replay != "" && state == journal.Applied && e.media == nil {
			// The answer as the agent got it, for a call re-issued.
			text, cut := replayable(e.text)
			r.Evidence[replayAnswer] = text
			if cut || e.truncated {
				r.Evidence[replayAnswerCut] = true
			}
		}
		loc := c.location(e)
		if loc != "" && e.status/100 == 3 {
			r.Evidence["location"] = loc
		}
		if e.status/100 != 2 {
			r.Detail = fmt.Sprintf("answered %d %s", e.status, http.StatusText(e.status))
			if loc != "" && e.status/100 == 3 {
				r.Detail += " to " + loc + ", not followed"
			}
		}
	}
	if state == journal.Ambiguous && r.Phase == "" {
		r.Phase = rubicon.Answered
	}
	var err error
	pause := 100 * time.Millisecond
	for try := 1; try <= recordTries; try++ {
		if _, err = c.journal.Record(ctx, sent.Key, r); err == nil || !passing(err) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, recordPause)
	}
	return err
}

// passing reports whether a failure to record may pass if tried again:
// not a refusal by the journal's rules.
func passing(err error) bool {
	for _, lasting := range []error{journal.ErrIllegalTransition, journal.ErrLeaseLost, journal.ErrNotFound, journal.ErrInvalid, context.Canceled} {
		if errors.Is(err, lasting) {
			return false
		}
	}
	return true
}

func reason(err error) string {
	var e *rubicon.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err.Error()
	}
	return err.Error()
}

// storable is s as the journal stores text: valid UTF-8 without NUL, which
// an agent's arguments need not be.
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func snippet(s string) string {
	return truncate(strings.TrimSpace(s), 500)
}

func errorResult(format string, args ...any) Result {
	return Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}
