package retry

import (
	"fmt"
	"slices"
	"time"
)

// Mode says how an operation may be retried once its request was sent.
// The zero value is [ByMethod].
type Mode int

const (
	// ByMethod lets the method decide: the safe methods (GET, HEAD, OPTIONS,
	// TRACE) are retried after they were sent; every other method only when
	// nothing was sent.
	ByMethod Mode = iota
	// OptedIn marks an operation that the server makes idempotent through an
	// idempotency key: it is retried after it was sent, with the same key on
	// every attempt. Opting in is a per-operation act; no client-wide default
	// can set it.
	OptedIn
	// NotSentOnly never retries once any byte was written, whatever the
	// method: for a GET that costs money, for example.
	NotSentOnly
)

// String returns the mode's name as used in configuration and output.
func (m Mode) String() string {
	switch m {
	case ByMethod:
		return "by_method"
	case OptedIn:
		return "opted_in"
	case NotSentOnly:
		return "not_sent_only"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode returns the Mode named s, as printed by [Mode.String].
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{ByMethod, OptedIn, NotSentOnly} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown retry mode %q: use by_method, opted_in or not_sent_only", s)
}

// IsSafeMethod reports whether method is one of the methods that HTTP defines
// as safe and that rubicon retries by default after they were sent: GET,
// HEAD, OPTIONS and TRACE. Methods are case-sensitive, as in HTTP.
func IsSafeMethod(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "":
		// net/http sends an empty method as GET.
		return true
	}
	return false
}

// Config holds the settings of a [Policy]. Start from [DefaultConfig] and
// change what you need; [New] checks every field.
type Config struct {
	// MaxAttempts is the number of attempts, the first one included. At
	// least 1; 1 disables retries.
	MaxAttempts int
	// BaseDelay is the backoff window of the first retry; each further retry
	// doubles it, up to MaxDelay. The wait is drawn uniformly from the window
	// (full jitter). More than zero.
	BaseDelay time.Duration
	// MaxDelay caps the backoff window. At least BaseDelay.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest wait a server may ask for through
	// Retry-After or retry-after-ms. When it asks for more, the call stops
	// at once instead of waiting. Not negative; 0 means any server-requested
	// wait stops the call.
	MaxRetryAfter time.Duration
	// Deadline bounds the whole call, every attempt and every wait included,
	// measured from its start. A context deadline that comes sooner wins.
	// Not negative; 0 leaves only the context's deadline.
	Deadline time.Duration
	// AttemptTimeout bounds each attempt. Not negative; 0 means no bound
	// beyond the deadline.
	AttemptTimeout time.Duration
	// RetryStatuses are the response statuses retried for safe methods and
	// for operations that opted in. Each between 400 and 599.
	RetryStatuses []int
	// NotProcessedStatuses are statuses that this API guarantees it sends
	// only for requests it did not process (some APIs document this for
	// 429). They are retried for every method except in [NotSentOnly] mode.
	// Each between 400 and 599.
	NotProcessedStatuses []int
}

// DefaultConfig returns the defaults: 4 attempts, a 100 ms base delay
// doubling up to 5 s, server-requested waits up to 30 s honoured, no
// deadline beyond the context's, and retries on 408, 429, 502, 503 and 504.
func DefaultConfig() Config {
	return Config{
		MaxAttempts:   4,
		BaseDelay:     100 * time.Millisecond,
		MaxDelay:      5 * time.Second,
		MaxRetryAfter: 30 * time.Second,
		RetryStatuses: []int{408, 429, 502, 503, 504},
	}
}

// Policy is a validated, immutable retry policy. It is safe for concurrent
// use.
type Policy struct {
	cfg          Config
	retry        statusSet
	notProcessed statusSet
}

// statusSet is a bitmap of the statuses 400 to 599.
type statusSet [4]uint64

func (s *statusSet) add(code int) { s[(code-400)/64] |= 1 << ((code - 400) % 64) }

func (s *statusSet) has(code int) bool {
	return code >= 400 && code <= 599 && s[(code-400)/64]&(1<<((code-400)%64)) != 0
}

// New checks cfg and returns the policy it describes. An invalid field is
// reported by name.
func New(cfg Config) (*Policy, error) {
	if cfg.MaxAttempts < 1 {
		return nil, fmt.Errorf("the retry policy's MaxAttempts is %d: it must be at least 1 (1 disables retries)", cfg.MaxAttempts)
	}
	if cfg.BaseDelay <= 0 {
		return nil, fmt.Errorf("the retry policy's BaseDelay is %s: it must be more than zero", cfg.BaseDelay)
	}
	if cfg.MaxDelay < cfg.BaseDelay {
		return nil, fmt.Errorf("the retry policy's MaxDelay is %s, below BaseDelay %s: the cap must be at least the base", cfg.MaxDelay, cfg.BaseDelay)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"MaxRetryAfter", cfg.MaxRetryAfter}, {"Deadline", cfg.Deadline}, {"AttemptTimeout", cfg.AttemptTimeout}} {
		if d.v < 0 {
			return nil, fmt.Errorf("the retry policy's %s is %s: it must not be negative", d.name, d.v)
		}
	}
	p := &Policy{cfg: cfg}
	p.cfg.RetryStatuses = slices.Clone(cfg.RetryStatuses)
	p.cfg.NotProcessedStatuses = slices.Clone(cfg.NotProcessedStatuses)
	for _, s := range []struct {
		name  string
		codes []int
		set   *statusSet
	}{{"RetryStatuses", cfg.RetryStatuses, &p.retry}, {"NotProcessedStatuses", cfg.NotProcessedStatuses, &p.notProcessed}} {
		for _, code := range s.codes {
			if code < 400 || code > 599 {
				return nil, fmt.Errorf("the retry policy's %s contains %d: only statuses from 400 to 599 can be retried", s.name, code)
			}
			s.set.add(code)
		}
	}
	return p, nil
}

// MustNew is like [New] but panics on an invalid config. It is meant for
// configs written in the program's source.
func MustNew(cfg Config) *Policy {
	p, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return p
}

// Config returns a copy of the policy's settings.
func (p *Policy) Config() Config {
	c := p.cfg
	c.RetryStatuses = slices.Clone(c.RetryStatuses)
	c.NotProcessedStatuses = slices.Clone(c.NotProcessedStatuses)
	return c
}

// Deadline returns the bound on a whole call (0 for none).
func (p *Policy) Deadline() time.Duration { return p.cfg.Deadline }

// AttemptTimeout returns the bound on each attempt (0 for none).
func (p *Policy) AttemptTimeout() time.Duration { return p.cfg.AttemptTimeout }

// MayRetryStatus reports whether a response with this status could be
// retried under some mode. A caller can use it to skip [Policy.Decide] on
// the success path.
func (p *Policy) MayRetryStatus(code int) bool {
	return p.retry.has(code) || p.notProcessed.has(code)
}

// NotProcessed reports whether the policy declares that the API sends code
// only for requests it did not process.
func (p *Policy) NotProcessed(code int) bool { return p.notProcessed.has(code) }
