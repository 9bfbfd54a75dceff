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

	"github.com/rubicon-go/rubicon/transport"
)

// sameOrigin reports whether u has the origin of base, by the rule of
// rubicon's transport.
func sameOrigin(u, base *url.URL) bool { return transport.SameOrigin(u, base) }

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

// redactor removes the upstream's secrets, in the forms an answer may
// echo them, from what toolgate hands to agents and writes to the
// journal.
type redactor struct {
	secrets, derived []string
	forms            [][]byte // longest first
	replacer         *strings.Replacer
}

// redacted stands for a secret that was removed.
const redacted = "[redacted]"

// minDerived is the shortest part of a secret (such as a basic password)
// redacted on its own: shorter ones would be found in ordinary text.
const minDerived = 6

// newRedactor returns a redactor of secrets, and of derived, parts of
// secrets (a basic password) redacted when at least minDerived long.
func newRedactor(secrets, derived []string) *redactor {
	r := &redactor{secrets: secrets, derived: derived}
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
		add(pctEscape(s), min)
		if j, err := json.Marshal(s); err == nil {
			add(string(j[1:len(j)-1]), min)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s)), min)
		}
	}
	for _, s := range secrets {
		variants(s, 1)
	}
	for _, s := range derived {
		variants(s, minDerived)
	}
	if len(r.forms) == 0 {
		return r
	}
	slices.SortFunc(r.forms, func(a, b []byte) int { return len(b) - len(a) })
	var pairs []string
	for _, f := range r.forms {
		pairs = append(pairs, string(f), redacted)
	}
	r.replacer = strings.NewReplacer(pairs...)
	return r
}

// with returns a redactor of r's secrets and of more: a call's tokens.
func (r *redactor) with(more ...string) *redactor {
	for i, m := range more {
		more[i] = tokenOf(m)
	}
	return newRedactor(append(slices.Clip(r.secrets), more...), r.derived)
}

// holds reports whether data holds one of the secrets' forms.
func (r *redactor) holds(data []byte) bool {
	for _, f := range r.forms {
		if bytes.Contains(data, f) {
			return true
		}
	}
	return false
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
