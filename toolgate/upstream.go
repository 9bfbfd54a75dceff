package toolgate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/transport"
)

// sameOrigin reports whether u has the origin of base, by the rule of
// rubicon's transport.
func sameOrigin(u, base *url.URL) bool { return transport.SameOrigin(u, base) }

// authTransport adds the upstream's credentials to each request for the
// upstream's origin, right before it is sent, and to no other: a request
// that a redirect or anything else sends elsewhere goes without them.
type authTransport struct {
	base   http.RoundTripper
	origin *url.URL
	header string // the header that carries the credentials
	value  string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	if sameOrigin(req.URL, t.origin) {
		r.Header.Set(t.header, t.value)
	} else {
		r.Header.Del(t.header)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the transport below.
func (t *authTransport) CloseIdleConnections() {
	type closer interface{ CloseIdleConnections() }
	if c, ok := t.base.(closer); ok {
		c.CloseIdleConnections()
	}
}

// credentials returns the header and value that carry secret for auth.
func credentials(auth config.Auth, secret string) (header, value string) {
	switch auth.Type {
	case "bearer":
		return "Authorization", "Bearer " + secret
	case "header":
		return auth.Header, secret
	case "basic":
		return "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(secret))
	}
	return "", ""
}

// followKey marks a call's context with whether its redirects may be
// followed.
type followKey struct{}

// withRedirects says whether the call in ctx may follow redirects: only a
// read may, and only within the upstream's origin.
func withRedirects(ctx context.Context, follow bool) context.Context {
	return context.WithValue(ctx, followKey{}, follow)
}

// checkRedirect follows a redirect only for a read, within the upstream's
// origin, and at most 10 times. Otherwise the redirect is the answer: a
// call that changes state is not repeated at another address, where it
// could be applied a second time, and nothing goes to another origin.
func (c *Caller) checkRedirect(req *http.Request, via []*http.Request) error {
	follow, _ := via[0].Context().Value(followKey{}).(bool)
	if !follow || len(via) >= 10 || !sameOrigin(req.URL, c.base) {
		return http.ErrUseLastResponse
	}
	return nil
}

// redactor removes the upstream's secret, in the forms an answer may echo
// it, from what toolgate hands to agents and writes to the journal.
type redactor struct {
	forms    [][]byte // longest first
	replacer *strings.Replacer
}

// redacted stands for a secret that was removed.
const redacted = "[redacted]"

// minDerived is the shortest part of a secret (such as a basic password)
// redacted on its own: shorter ones would be found in ordinary text.
const minDerived = 6

func newRedactor(auth config.Auth, secret string) *redactor {
	r := &redactor{}
	if secret == "" {
		return r
	}
	seen := map[string]bool{}
	add := func(s string, min int) {
		if len(s) < min || seen[s] {
			return
		}
		seen[s] = true
		r.forms = append(r.forms, []byte(s))
	}
	variants := func(s string, min int) {
		add(s, min)
		add(url.QueryEscape(s), min)
		add(url.PathEscape(s), min)
		if j, err := json.Marshal(s); err == nil {
			add(string(j[1:len(j)-1]), min)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s)), min)
		}
	}
	variants(secret, 1)
	if auth.Type == "basic" {
		if _, pass, ok := strings.Cut(secret, ":"); ok {
			variants(pass, minDerived)
		}
	}
	slices.SortFunc(r.forms, func(a, b []byte) int { return len(b) - len(a) })
	var pairs []string
	for _, f := range r.forms {
		pairs = append(pairs, string(f), redacted)
	}
	r.replacer = strings.NewReplacer(pairs...)
	return r
}

// string returns s without the secret.
func (r *redactor) string(s string) string {
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// value returns a copy of v, decoded JSON, without the secret in any
// string or key.
func (r *redactor) value(v any) any {
	if r.replacer == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return r.string(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.string(k)] = r.value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e)
		}
		return out
	}
	return v
}

// result returns res without the secret.
func (r *redactor) result(res Result) Result {
	res.Text = r.string(res.Text)
	if res.Structured != nil {
		res.Structured, _ = r.value(res.Structured).(map[string]any)
	}
	return res
}

// longest is the length of the longest form of the secret.
func (r *redactor) longest() int {
	if len(r.forms) == 0 {
		return 0
	}
	return len(r.forms[0])
}

// cut returns where to cut data, read past n by at least longest bytes,
// so that the first n bytes are kept and no form of the secret is cut in
// two: one that starts before n is kept whole, to be redacted.
func (r *redactor) cut(data []byte, n int) int {
	end := n
	for _, f := range r.forms {
		for from := max(0, n-len(f)+1); from < n; {
			i := bytes.Index(data[from:], f)
			if i < 0 || from+i >= n {
				break
			}
			end = max(end, from+i+len(f))
			from += i + 1
		}
	}
	return min(end, len(data))
}
