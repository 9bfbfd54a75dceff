package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxWait is the longest wait ParseRetryAfter reports; larger requests are
// clamped to it rather than overflowing.
const maxWait = time.Duration(math.MaxInt64)

// ParseRetryAfter returns the wait a response asks for, and whether it asks
// for one. It reads retry-after-ms (milliseconds, possibly fractional, as
// some APIs send) first, then Retry-After as delta-seconds or as an
// HTTP-date measured from now. A date in the past asks for no wait. Values
// that are malformed or negative are ignored, as RFC 9110 allows.
func ParseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if d, ok := parseMillis(v); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(maxWait/time.Second) {
			// Only digits, so the error is overflow: a very long wait.
			return maxWait, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	d := t.Sub(now) // Sub saturates rather than overflowing.
	return d, true
}

func parseMillis(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(ms) || ms < 0 {
		return 0, false
	}
	if ms >= float64(maxWait/time.Millisecond) {
		return maxWait, true
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
