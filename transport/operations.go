package transport

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/rubicon-go/rubicon/retry"
)

// Operation sets how the requests of one operation may be retried once
// sent.
type Operation struct {
	// Pattern names the operation as an http.ServeMux pattern with a method:
	// "POST /v1/orders", "PUT api.example.com/v1/items/{id}". The method is
	// required, in upper case as requests send it; a host is written
	// without a port. A pattern matches a subtree only when it says so with
	// a trailing wildcard, "POST /v1/{rest...}": "POST /v1/" is refused
	// (write "POST /v1/{$}" for that path alone). An opted-in pattern must
	// name an operation, with at least one literal path segment: "POST /",
	// "POST /{rest...}" and "POST /{a}/{b...}" are refused. [New] refuses
	// every pattern that breaks these rules, with what to write instead.
	Pattern string
	// Mode is how matching requests may be retried once sent.
	Mode retry.Mode
}

// operations matches requests to their configured mode.
type operations struct {
	mux *http.ServeMux
}

// modeHandler marks a pattern's mode; it is never served.
type modeHandler retry.Mode

// ServeHTTP does nothing: a modeHandler only marks a match.
func (modeHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

func newOperations(ops []Operation) (o *operations, err error) {
	if len(ops) == 0 {
		return nil, nil
	}
	o = &operations{mux: http.NewServeMux()}
	for _, op := range ops {
		if err := checkOperation(op); err != nil {
			return nil, err
		}
		if err := register(o.mux, op); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// checkOperation refuses patterns that could never match a request and
// patterns that would reach further than they say: a pattern names
// operations explicitly.
func checkOperation(op Operation) error {
	switch op.Mode {
	case retry.ByMethod, retry.OptedIn, retry.NotSentOnly:
	default:
		return fmt.Errorf("operation pattern %q: unknown mode %d: use retry.ByMethod, retry.OptedIn or retry.NotSentOnly", op.Pattern, int(op.Mode))
	}
	method, rest, ok := strings.Cut(strings.TrimLeft(op.Pattern, " \t"), " ")
	if !ok || method == "" || strings.ContainsAny(method, "/{") {
		return fmt.Errorf("operation pattern %q: the pattern must start with a method, as in \"POST /v1/orders\"", op.Pattern)
	}
	if upper := strings.ToUpper(method); method != upper {
		return fmt.Errorf("operation pattern %q: methods are case-sensitive and requests send them in upper case, so %q would never match: write %q", op.Pattern, method, upper)
	}
	host, path, ok := strings.Cut(strings.TrimSpace(rest), "/")
	if !ok {
		return fmt.Errorf("operation pattern %q: the pattern needs a path after the method, as in \"POST /v1/orders\"", op.Pattern)
	}
	if strings.Contains(host, ":") {
		return fmt.Errorf("operation pattern %q: a host is matched without its port, so %q would never match: write the host alone", op.Pattern, host)
	}
	path = "/" + path
	if op.Mode == retry.OptedIn && path != "/{$}" && !hasLiteralSegment(path) {
		return fmt.Errorf("operation pattern %q: opting in must name an operation; a pattern without a literal path segment matches (almost) every path and would opt in the whole client", op.Pattern)
	}
	if strings.HasSuffix(path, "/") {
		return fmt.Errorf("operation pattern %q: a pattern ending in / would match every path below %s; write %q for that path alone, or %q to name every operation below it", op.Pattern, path, method+" "+host+path+"{$}", method+" "+host+path+"{rest...}")
	}
	return nil
}

// hasLiteralSegment reports whether path has a segment that is not a
// wildcard.
func hasLiteralSegment(path string) bool {
	for seg := range strings.SplitSeq(strings.Trim(path, "/"), "/") {
		if seg != "" && !strings.HasPrefix(seg, "{") {
			return true
		}
	}
	return false
}

// register adds op to mux, turning ServeMux's panic on a bad or conflicting
// pattern into an error.
func register(mux *http.ServeMux, op Operation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("operation pattern %q: %v", op.Pattern, r)
		}
	}()
	mux.Handle(op.Pattern, modeHandler(op.Mode))
	return nil
}

// match returns the mode of the operation req belongs to, if any.
func (o *operations) match(req *http.Request) (retry.Mode, bool) {
	if o == nil {
		return retry.ByMethod, false
	}
	r := req
	if r.Host == "" {
		// Host patterns match against Host, which clients usually leave to
		// the URL.
		shallow := *req
		shallow.Host = req.URL.Host
		r = &shallow
	}
	h, _ := o.mux.Handler(r)
	if m, ok := h.(modeHandler); ok {
		return retry.Mode(m), true
	}
	return retry.ByMethod, false
}

type modeKey struct{}

type requestMode struct {
	mode retry.Mode
	key  string
}

// WithMode returns a context under which requests may be retried as mode
// says, whatever the configured operations say. Use it to opt in a single
// call, or to make a costly GET never retried once sent.
func WithMode(ctx context.Context, mode retry.Mode) context.Context {
	return context.WithValue(ctx, modeKey{}, requestMode{mode: mode})
}

// WithIdempotencyKey returns a context under which requests are opted in
// to retries and carry key as their idempotency key on every attempt. Use
// a key that names the logical operation, such as a journal's operation key,
// so that a retry from another process is recognised too.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, modeKey{}, requestMode{mode: retry.OptedIn, key: key})
}

// modeOf returns how req may be retried once sent, and the idempotency key
// the caller chose, if any.
func (t *Transport) modeOf(req *http.Request) (retry.Mode, string) {
	if rm, ok := req.Context().Value(modeKey{}).(requestMode); ok {
		return rm.mode, rm.key
	}
	mode, _ := t.ops.match(req)
	return mode, ""
}
