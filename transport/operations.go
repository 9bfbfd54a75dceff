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
	// required. An opted-in pattern must name an operation, not every path:
	// "POST /" and "POST /{rest...}" are refused.
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

func checkOperation(op Operation) error {
	switch op.Mode {
	case retry.ByMethod, retry.OptedIn, retry.NotSentOnly:
	default:
		return fmt.Errorf("transport: operation %q: unknown mode %d", op.Pattern, int(op.Mode))
	}
	method, rest, ok := strings.Cut(strings.TrimSpace(op.Pattern), " ")
	if !ok || method == "" || strings.ContainsAny(method, "/{") {
		return fmt.Errorf("transport: operation %q: the pattern must start with a method, as in \"POST /v1/orders\"", op.Pattern)
	}
	if op.Mode == retry.OptedIn {
		path := strings.TrimSpace(rest)
		if i := strings.IndexByte(path, '/'); i >= 0 {
			path = path[i:]
		}
		if path == "/" || (strings.HasPrefix(path, "/{") && strings.HasSuffix(path, "...}") && strings.Count(path, "/") == 1) {
			return fmt.Errorf("transport: operation %q: opting in must name an operation; a pattern that matches every path would opt in the whole client", op.Pattern)
		}
	}
	return nil
}

// register adds op to mux, turning ServeMux's panic on a bad or conflicting
// pattern into an error.
func register(mux *http.ServeMux, op Operation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("transport: operation %q: %v", op.Pattern, r)
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
