package toolgate

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// OutcomeRateLimited: not sent; the tool's rate limit refused it.
const OutcomeRateLimited = "rate_limited"

// newLimits returns the token buckets of cat's tools that have a rate
// limit: a tag's limit is one bucket its tools share, any other a tool's
// own. The buckets belong to this process: servers that share a journal
// limit each on its own.
func newLimits(cat *Catalog) map[*Tool]*rate.Limiter {
	limits := map[*Tool]*rate.Limiter{}
	shared := map[string]*rate.Limiter{}
	for _, t := range cat.Tools {
		r := t.RateLimit
		if r.Unlimited() {
			continue
		}
		if !strings.HasPrefix(t.RateRule, "tags.") {
			limits[t] = rate.NewLimiter(rate.Limit(r.PerMinute/60), r.Burst)
			continue
		}
		if shared[t.RateRule] == nil {
			shared[t.RateRule] = rate.NewLimiter(rate.Limit(r.PerMinute/60), r.Burst)
		}
		limits[t] = shared[t.RateRule]
	}
	return limits
}

// RateLimitText says how often t may be called, and by which setting:
// "10 a minute, 5 at once (defaults.rate_limit.write)".
func RateLimitText(t *Tool) string {
	return t.RateLimit.String() + " (" + t.RateRule + ")"
}

// throttled returns the result that refuses a call of t for its rate
// limit, or nil when the call may go. A call that may go takes its token
// when take is set; otherwise the bucket is only looked at, so that a
// person is not asked about a call that would be refused.
func (c *Caller) throttled(t *Tool, take bool) *Result {
	lim := c.limits[t]
	if lim == nil {
		return nil
	}
	now := time.Now()
	r := lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait > 0 || !take {
		r.CancelAt(now)
	}
	if wait == 0 {
		return nil
	}
	whose := "its calls"
	if strings.HasPrefix(t.RateRule, "tags.") {
		whose = "the calls of its tag's tools together"
	}
	res := rateLimited(fmt.Sprintf("%s is limited to %s (%s), and %s have used that up", t.Name, t.RateLimit, t.RateRule, whose),
		"Nothing was sent.", wait, true)
	return &res
}

// upstreamLimited returns, when e is the upstream's 429 answer, the result
// that tells of it in the shape of the tool's own rate limit: when to try
// again, as the upstream's Retry-After asks. A read is answered so once
// the transport gives up retrying it.
func (e ending) upstreamLimited() (Result, bool) {
	if e.err != nil || e.status != http.StatusTooManyRequests {
		return Result{}, false
	}
	why := "the upstream API refused the call: 429 Too Many Requests"
	if body := e.body(); body != "" {
		why += ": " + strings.TrimSuffix(body, ".")
	}
	return rateLimited(why, "Nothing was applied.", e.retryAfter, e.asksWait), true
}

// rateLimited is the result of a call refused for a rate limit: why, what
// was not done, and when to try again, if that is known.
func rateLimited(why, nothing string, wait time.Duration, known bool) Result {
	if !known {
		return errorResult("RATE LIMITED: %s. %s Try again later: it did not say when.", why, nothing)
	}
	return errorResult("RATE LIMITED: %s. %s Try again in %d s.", why, nothing, seconds(wait))
}

// seconds is d in whole seconds, rounded up, and at least 1.
func seconds(d time.Duration) int64 {
	return max(1, int64(math.Ceil(d.Seconds())))
}
