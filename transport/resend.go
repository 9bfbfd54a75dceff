package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rubicon-go/rubicon"
)

// DefaultResendWindow is how long a Transport remembers a call whose outcome
// was unknown, unless Options says otherwise.
const DefaultResendWindow = 24 * time.Hour

// maxRemembered bounds the calls a Transport remembers; the oldest are
// forgotten first.
const maxRemembered = 10_000

// maxDigestedBody bounds the body a Transport reads to tell whether a
// request repeats a remembered call; a longer body without GetBody is
// taken for another call.
const maxDigestedBody = 64 << 20

// ErrResendRefused is wrapped by the error of a request that the Transport
// did not send because it repeats a call whose outcome is unknown.
var ErrResendRefused = errors.New("a re-send of a call whose outcome is unknown was not sent")

type callKey struct{}

var lastCall atomic.Uint64

// NewCall returns a context for a new logical call. A Transport takes a
// request for a re-send of an earlier call (see [Options.ResendWindow])
// only within one call: a request sent under the returned context is never
// taken for a re-send of one sent outside it, while every request under it
// that repeats one of its own is. Use it where an application means a
// second, separate call that looks like the first one:
//
//	ctx = transport.NewCall(ctx) // a second order, on purpose
//
// A request that carries an idempotency key is recognised by its key
// alone: a new key is a new call, with or without NewCall.
func NewCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, callKey{}, lastCall.Add(1))
}

func callOf(ctx context.Context) uint64 {
	id, _ := ctx.Value(callKey{}).(uint64)
	return id
}

// resends remembers the calls that ended with their outcome unknown, so
// that a layer above the Transport (an SDK's retry loop, an http.Client
// wrapper, the application) cannot send one of them again.
type resends struct {
	window time.Duration
	// count is the number of calls remembered, read without the lock so
	// that requests pay nothing while none is.
	count atomic.Int64

	mu sync.Mutex
	// calls maps a call's identity to how it ended.
	calls map[string]endedCall
	// targets counts the remembered calls without an idempotency key per
	// call, method and URL, so that a body is digested only when a call to
	// the same target is remembered.
	targets map[string]int
	// order lists identities oldest first, for expiry and eviction.
	order []string
}

// endedCall is a call remembered with the error that described it.
type endedCall struct {
	err    *rubicon.Error
	at     time.Time
	target string // "" for a call identified by its key
}

func newResends(window time.Duration) *resends {
	if window < 0 {
		return nil
	}
	if window == 0 {
		window = DefaultResendWindow
	}
	return &resends{window: window, calls: make(map[string]endedCall), targets: make(map[string]int)}
}

// identity names the logical call a request belongs to. A request with an
// idempotency key is its key on its origin; any other is its call scope,
// method, URL and body. bodyDigest is computed only when needed.
type identity struct {
	key    string // the idempotency key identity, if the request has a key
	target string // scope, method and URL, for a request without a key
	digest string // the body's digest, once known
}

func (id identity) String() string {
	if id.key != "" {
		return id.key
	}
	return id.target + " " + id.digest
}

// keyHeaders are the headers that carry a request's idempotency key, the
// configured one first.
func keyHeaders(configured string) [3]string {
	return [...]string{configured, DefaultIdempotencyHeader, "X-Idempotency-Key"}
}

// hasKey reports whether header carries an idempotency key.
func hasKey(header http.Header, configured string) bool {
	for _, h := range keyHeaders(configured) {
		if header.Get(h) != "" {
			return true
		}
	}
	return false
}

// identify returns the identity of req, without its body's digest.
func identify(req *http.Request, keyHeader string) identity {
	for _, h := range keyHeaders(keyHeader) {
		if v := req.Header.Get(h); v != "" {
			return identity{key: "key " + req.URL.Scheme + "://" + req.URL.Host + " " + h + ": " + v}
		}
	}
	return identity{target: strconv.FormatUint(callOf(req.Context()), 10) + " " + methodOrGet(req.Method) + " " + req.URL.String()}
}

// remembers reports whether any call is remembered: while none is, a
// request needs no identity until its own outcome is unknown.
func (r *resends) remembers() bool { return r.count.Load() > 0 }

// find returns the remembered call that req repeats, if any. body is the
// request's body, which find may have to read; it returns the body to
// send instead (the same one, or a copy of what it read) and how to
// produce it again.
func (r *resends) find(id *identity, body io.ReadCloser, getBody func() (io.ReadCloser, error), now time.Time) (*endedCall, io.ReadCloser, func() (io.ReadCloser, error)) {
	if r == nil || !r.remembers() {
		return nil, body, getBody
	}
	if id.key == "" {
		r.mu.Lock()
		n := r.targets[id.target]
		r.mu.Unlock()
		if n == 0 {
			return nil, body, getBody
		}
		var ok bool
		id.digest, body, getBody, ok = digestBody(body, getBody)
		if !ok {
			return nil, body, getBody
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.calls[id.String()]
	if !ok || now.Sub(e.at) > r.window {
		return nil, body, getBody
	}
	return &e, body, getBody
}

// remember records that the call id ended with err, its outcome unknown.
func (r *resends) remember(id identity, err *rubicon.Error, now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire(now)
	s := id.String()
	if _, ok := r.calls[s]; !ok {
		r.order = append(r.order, s)
		if id.key == "" {
			r.targets[id.target]++
		}
	}
	r.calls[s] = endedCall{err: err, at: now, target: id.target}
	r.count.Store(int64(len(r.calls)))
}

// expire forgets calls older than the window, and the oldest beyond the
// bound. r.mu is held.
func (r *resends) expire(now time.Time) {
	drop := 0
	for drop < len(r.order) {
		e, ok := r.calls[r.order[drop]]
		if ok && now.Sub(e.at) <= r.window && len(r.order)-drop < maxRemembered {
			break
		}
		if ok {
			if e.target != "" {
				if r.targets[e.target]--; r.targets[e.target] <= 0 {
					delete(r.targets, e.target)
				}
			}
			delete(r.calls, r.order[drop])
		}
		drop++
	}
	r.order = r.order[drop:]
}

// digestBody returns the digest of a request body, with the body to send
// in its place and a way to produce it again. ok is false when the body
// could not be read whole within maxDigestedBody: such a request is taken
// for another call.
func digestBody(body io.ReadCloser, getBody func() (io.ReadCloser, error)) (digest string, _ io.ReadCloser, _ func() (io.ReadCloser, error), ok bool) {
	if body == nil || body == http.NoBody {
		return emptyDigest, body, getBody, true
	}
	if getBody != nil {
		b, err := getBody()
		if err != nil {
			return "", body, getBody, false
		}
		defer b.Close()
		h := sha256.New()
		if n, err := io.Copy(h, io.LimitReader(b, maxDigestedBody+1)); err != nil || n > maxDigestedBody {
			return "", body, getBody, false
		}
		return hex.EncodeToString(h.Sum(nil)), body, getBody, true
	}
	// The body can be read once only: read it, and send what was read.
	data, err := io.ReadAll(io.LimitReader(body, maxDigestedBody+1))
	rest := io.MultiReader(bytes.NewReader(data), body)
	replay := readCloser{Reader: rest, Closer: body}
	if err != nil || len(data) > maxDigestedBody {
		return "", replay, nil, false
	}
	body.Close()
	again := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	sum := sha256.Sum256(data)
	b, _ := again()
	return hex.EncodeToString(sum[:]), b, again, true
}

var emptyDigest = func() string { s := sha256.Sum256(nil); return hex.EncodeToString(s[:]) }()

type readCloser struct {
	io.Reader
	io.Closer
}

// digestingBody digests what is read of a body that cannot be produced
// again, so that a call that ends with its outcome unknown can be
// recognised when it is sent again.
type digestingBody struct {
	io.ReadCloser
	h    hash.Hash
	read int64
}

// Read reads from the body and digests what it read.
func (d *digestingBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	d.h.Write(p[:n])
	d.read += int64(n)
	return n, err
}

// digest of the body, as far as it was read.
func (d *digestingBody) digest() string { return hex.EncodeToString(d.h.Sum(nil)) }

// refusal is the error of a request not sent because it repeats the call e.
func refusal(req *http.Request, e *endedCall, now time.Time) *rubicon.Error {
	first := e.err
	return &rubicon.Error{
		Method:       methodOrGet(req.Method),
		URL:          rubicon.RedactURL(req.URL),
		Phase:        first.Phase,
		Outcome:      rubicon.Unknown,
		Attempts:     first.Attempts,
		BytesWritten: first.BytesWritten,
		StatusCode:   first.StatusCode,
		Reason: fmt.Sprintf("not sent again: the same call ended %s ago with its outcome unknown, so another attempt could apply it twice; find out whether it was applied (a separate call on purpose goes under transport.NewCall)",
			now.Sub(e.at).Round(time.Millisecond)),
		Err: ErrResendRefused,
	}
}
