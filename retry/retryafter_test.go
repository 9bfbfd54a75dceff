package retry

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := t0
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"absent", http.Header{}, 0, false},
		{"nil header", nil, 0, false},
		{"delta seconds", http.Header{"Retry-After": {"120"}}, 120 * time.Second, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"spaces", http.Header{"Retry-After": {"  5 "}}, 5 * time.Second, true},
		{"IMF-fixdate", http.Header{"Retry-After": {"Mon, 30 Nov 2026 12:00:30 GMT"}}, 30 * time.Second, true},
		{"RFC 850 date", http.Header{"Retry-After": {"Monday, 30-Nov-26 12:01:00 GMT"}}, time.Minute, true},
		{"asctime date", http.Header{"Retry-After": {"Mon Nov 30 12:00:10 2026"}}, 10 * time.Second, true},
		{"date in the past", http.Header{"Retry-After": {"Sun, 29 Nov 2026 12:00:00 GMT"}}, 0, true},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0, false},
		{"fraction of seconds", http.Header{"Retry-After": {"1.5"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"overflowing seconds", http.Header{"Retry-After": {"99999999999999999999999"}}, maxWait, true},
		{"milliseconds", http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond, true},
		{"fractional milliseconds", http.Header{"Retry-After-Ms": {"2.5"}}, 2500 * time.Microsecond, true},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"20"}, "Retry-After": {"1"}}, 20 * time.Millisecond, true},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"1"}}, time.Second, true},
		{"negative milliseconds fall back", http.Header{"Retry-After-Ms": {"-3"}}, 0, false},
		{"huge milliseconds", http.Header{"Retry-After-Ms": {"1e300"}}, maxWait, true},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.header, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: ParseRetryAfter = %s, %v; want %s, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseRetryAfter checks that no header value makes the parser panic or
// report a negative wait, and that a reported wait is stable.
func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range []string{"0", "1", "120", "-1", "1.5", "Mon, 30 Nov 2026 12:00:30 GMT",
		"Monday, 30-Nov-26 12:01:00 GMT", "Mon Nov 30 12:00:10 2026", "99999999999999999999", "", " 7 ", "soon", "1e9", "Inf"} {
		f.Add(seed, "")
		f.Add("", seed)
	}
	f.Fuzz(func(t *testing.T, retryAfter, retryAfterMs string) {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		if retryAfterMs != "" {
			h.Set("Retry-After-Ms", retryAfterMs)
		}
		d, ok := ParseRetryAfter(h, t0)
		if d < 0 {
			t.Fatalf("negative wait %s for Retry-After %q, retry-after-ms %q", d, retryAfter, retryAfterMs)
		}
		if !ok && d != 0 {
			t.Fatalf("wait %s reported without ok", d)
		}
		if d2, ok2 := ParseRetryAfter(h, t0); d2 != d || ok2 != ok {
			t.Fatalf("unstable: %s %v then %s %v", d, ok, d2, ok2)
		}
	})
}
