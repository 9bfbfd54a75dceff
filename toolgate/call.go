package toolgate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/transport"
)

// JournalKind is the kind of the journal's toolgate calls.
const JournalKind = "toolgate"

// Caller calls the upstream API for tools.
type Caller struct {
	cat     *Catalog
	base    *url.URL
	client  *http.Client
	auth    config.Auth
	redact  *redactor
	journal *journal.Journal // nil: calls are not journaled
	worker  string

	mu      sync.Mutex
	schemas map[string]*jsonschema.Resolved // compiled on a tool's first call
	// beginning serializes the check for an identical open call with the
	// insert of the new one, so two concurrent identical calls cannot both
	// pass the check.
	beginning sync.Mutex
}

// NewCaller returns a caller for cat's tools against base, authenticating
// with auth, whose secret it reads once from the environment (getenv).
// The journal, if not nil, records every call to a tool that is not read
// only, so that an ambiguous call is kept and an identical one refused.
//
// The secret goes only to base's origin (scheme, host and port): it is
// added to each request right before it is sent there, never to one bound
// elsewhere. Redirects are followed for read tools within that origin
// only; any other redirect is the call's answer. Answers that echo the
// secret have it redacted. client, if not nil, provides the transport and
// the timeout; its redirect policy and cookie jar are not used.
func NewCaller(cat *Catalog, base string, auth config.Auth, getenv func(string) string, client *http.Client, j *journal.Journal) (*Caller, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: give an http or https URL (config upstream.url, --upstream, or the document's servers)", base)
	}
	c := &Caller{cat: cat, base: u, auth: auth, journal: j, worker: "toolgate", schemas: map[string]*jsonschema.Resolved{}}
	var secret string
	if auth.Type != "none" && auth.Type != "" {
		secret = getenv(auth.Env)
		if secret == "" {
			return nil, fmt.Errorf("upstream authentication needs $%s, which is not set", auth.Env)
		}
	}
	c.redact = newRedactor(auth, secret)
	if client == nil {
		if client, err = transport.NewClient(transport.Options{}); err != nil {
			return nil, err
		}
	}
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if header, value := credentials(auth, secret); header != "" {
		rt = &authTransport{base: rt, origin: u, header: header, value: value}
	}
	c.client = &http.Client{Transport: rt, CheckRedirect: c.checkRedirect, Timeout: client.Timeout}
	return c, nil
}

// Result is what a tool call returns to the agent.
type Result struct {
	Text    string
	IsError bool
	// Structured is the answer as JSON, when it is an object.
	Structured map[string]any
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

// Call calls the tool name with the arguments args (a JSON object). A
// tool that needs a person's confirmation asks it through person, once
// the request is built and before it is recorded or sent; with a nil
// person, such a call is refused. The result never holds the upstream's
// secret.
func (c *Caller) Call(ctx context.Context, name string, args json.RawMessage, person Confirmer) Result {
	return c.redact.result(c.call(ctx, name, args, person))
}

func (c *Caller) call(ctx context.Context, name string, args json.RawMessage, person Confirmer) Result {
	t := c.cat.Lookup(name)
	if t == nil || !t.Exposed {
		// Hidden tools are not listed; they are refused by name as well.
		return errorResult("there is no tool named %q here", name)
	}
	var a map[string]any
	if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || string(trimmed) == "null" {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &a); err != nil || a == nil {
		return errorResult("the arguments of %s must be a JSON object", name)
	}
	schema, err := c.schema(t)
	if err != nil {
		return errorResult("%v. Nothing was sent.", err)
	}
	if err := schema.Validate(a); err != nil {
		return errorResult("%s", invalidArguments(name, schema, a, err))
	}
	// The request is built from the arguments with their numbers as
	// written: an ID of 19 digits must reach the upstream unchanged.
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var exact map[string]any
	if err := dec.Decode(&exact); err != nil {
		return errorResult("the arguments of %s must be a JSON object", name)
	}
	req, err := c.request(ctx, t, exact)
	if err != nil {
		return errorResult("%v. Nothing was sent.", err)
	}
	if t.Confirm {
		if res, ok := c.confirm(ctx, t, req, exact, args, person); !ok {
			return res
		}
	}

	// The deadline starts now, once a person has answered if one was
	// asked: their time to read is not the upstream's time to answer.
	ctx, cancel := context.WithTimeout(ctx, t.Deadline)
	defer cancel()
	var opKey string
	if c.journal != nil && !t.Annotations.ReadOnly {
		var refusal string
		opKey, refusal, err = c.begin(ctx, t, exact, args)
		if err != nil {
			return errorResult("the call could not be recorded before sending (%v). Nothing was sent.", err)
		}
		if refusal != "" {
			return Result{IsError: true, Text: refusal}
		}
	}
	switch {
	case t.Retry == retry.OptedIn:
		// One key for this tool call, sent on every attempt.
		key := opKey
		if key == "" {
			key = "toolgate-" + rand.Text()
		}
		ctx = transport.WithIdempotencyKey(ctx, key)
	default:
		ctx = transport.WithMode(ctx, t.Retry)
	}
	ctx = withRedirects(ctx, t.Annotations.ReadOnly)
	resp, err := c.client.Do(req.WithContext(ctx))
	res, outcome, ans := c.result(t, resp, err)
	if opKey != "" {
		c.finish(context.WithoutCancel(ctx), opKey, outcome, err, ans)
	}
	return res
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

// maxAnswer bounds the answer text handed to the agent.
const maxAnswer = 100 << 10

// answer is what the journal keeps of the upstream's answer.
type answer struct {
	status   int
	location string // where a redirect points, redacted
}

// result turns the upstream's answer, or the failure, into the tool's
// result and the journal's outcome.
func (c *Caller) result(t *Tool, resp *http.Response, err error) (Result, journal.State, answer) {
	if err != nil {
		if rubicon.IsAmbiguous(err) {
			return c.ambiguous(t, "the request was sent and no answer came back"), journal.Ambiguous, answer{}
		}
		if rubicon.SafeToRetry(err) {
			return errorResult("the upstream API could not be reached, and nothing was sent (%s). You may call again.", reason(err)), journal.FailedSafe, answer{}
		}
		return c.ambiguous(t, "the call failed in a way that does not show whether it was applied"), journal.Ambiguous, answer{}
	}
	defer resp.Body.Close()
	// Read past the limit by the longest form of the secret, so that one
	// that straddles the limit is cut whole and redacted, never in part.
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, int64(maxAnswer+1+c.redact.longest())))
	truncated := len(data) > maxAnswer
	if truncated {
		data = data[:c.redact.cut(data, maxAnswer)]
	}
	text := c.redact.string(string(data))
	if truncated {
		text += "\n[answer cut at 100 KiB]"
	}
	status := resp.StatusCode
	ans := answer{status: status}
	switch {
	case readErr != nil && status/100 == 2:
		return c.ambiguous(t, "the answer broke off while it was being read"), journal.Ambiguous, ans
	case status/100 == 2:
		r := Result{Text: text}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil && !truncated {
			r.Structured = m
		}
		return r, journal.Applied, ans
	case status/100 == 3:
		return c.redirected(t, resp, text)
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || (status >= 400 && status < 500):
		return errorResult("the upstream API refused the call: %d %s: %s", status, http.StatusText(status), snippet(text)), journal.NotApplied, ans
	case t.Annotations.ReadOnly:
		return errorResult("the upstream API failed: %d %s: %s", status, http.StatusText(status), snippet(text)), journal.NotApplied, ans
	}
	return c.ambiguous(t, fmt.Sprintf("the upstream API answered %d %s, which does not say whether it was applied", status, http.StatusText(status))), journal.Ambiguous, ans
}

// redirected is the result of a redirect that was not followed: any
// redirect of a call that changes state, and a read's redirect to another
// origin. What it proves follows ARCHITECTURE.md: 303 means applied, 307
// and 308 not applied here, anything else unknown.
func (c *Caller) redirected(t *Tool, resp *http.Response, text string) (Result, journal.State, answer) {
	status := resp.StatusCode
	ans := answer{status: status}
	to, elsewhere := "no address", false
	if loc, err := resp.Location(); err == nil {
		ans.location = c.redact.string(rubicon.RedactURL(loc))
		to, elsewhere = ans.location, !sameOrigin(loc, c.base)
		if elsewhere {
			to += ", another origin than the upstream's"
		}
	}
	answered := fmt.Sprintf("%d %s (to %s)", status, http.StatusText(status), to)
	switch {
	case t.Annotations.ReadOnly && elsewhere:
		return errorResult("the upstream API redirected the call: %s, which toolgate does not follow: redirects are followed only within the upstream's origin, where its credentials belong. Nothing was read. %s",
			answered, snippet(text)), journal.NotApplied, ans
	case t.Annotations.ReadOnly:
		return errorResult("the upstream API answered %s, which toolgate did not follow (no address, or more than 10 redirects). Nothing was read. %s",
			answered, snippet(text)), journal.NotApplied, ans
	case status == http.StatusSeeOther:
		return Result{Text: fmt.Sprintf("The upstream API applied the call and points at its result: %s. %s", answered, snippet(text))}, journal.Applied, ans
	case status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect:
		return errorResult("the upstream API did not apply the call here: it answered %s, asking for the same request at that address. "+
			"toolgate does not repeat a call that changes state at another address. Nothing was applied; tell a person if the upstream has moved.", answered), journal.NotApplied, ans
	}
	return c.ambiguous(t, fmt.Sprintf("the upstream API answered %s, which toolgate does not follow for a call that changes state, and which does not say whether it was applied", answered)), journal.Ambiguous, ans
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

// finish records the call's outcome, with the answer's status and where
// a redirect pointed, redacted.
func (c *Caller) finish(ctx context.Context, key string, outcome journal.State, cause error, ans answer) {
	r := journal.Report{Worker: c.worker, To: outcome}
	if cause != nil {
		r = journal.ReportFor(c.worker, cause)
		r.To = outcome
		r.Detail = c.redact.string(r.Detail)
	}
	if ans.status != 0 {
		r.Evidence = journal.Evidence{"status": ans.status}
		if ans.location != "" {
			r.Evidence["location"] = ans.location
		}
		if ans.status/100 != 2 {
			r.Detail = fmt.Sprintf("answered %d %s", ans.status, http.StatusText(ans.status))
			if ans.location != "" {
				r.Detail += " to " + ans.location + ", not followed"
			}
		}
	}
	if outcome == journal.Ambiguous && r.Phase == "" {
		r.Phase = rubicon.Answered
	}
	c.journal.Record(ctx, key, r)
}

func reason(err error) string {
	var e *rubicon.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err.Error()
	}
	return err.Error()
}

func snippet(s string) string {
	return truncate(strings.TrimSpace(s), 500)
}

func errorResult(format string, args ...any) Result {
	return Result{IsError: true, Text: fmt.Sprintf(format, args...)}
}

// Base returns the upstream's base URL.
func (c *Caller) Base() *url.URL { return c.base }
