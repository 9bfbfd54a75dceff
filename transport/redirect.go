package transport

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rubicon-go/rubicon"
)

// followRedirect applies the origin rule to a request that http.Client
// makes to follow a redirect (it carries the response that caused it): to
// another origin, a request that may have an effect is not sent at all,
// and a read is sent without credentials or idempotency keys. An origin
// is a scheme, a host and a port: net/http keeps credentials for another
// port of the same host, rubicon does not.
func (c *call) followRedirect() error {
	prev := c.req.Response
	if prev == nil || prev.Request == nil || prev.Request.URL == nil || SameOrigin(prev.Request.URL, c.req.URL) {
		return nil
	}
	if !c.isRead() {
		closeBody(c.req)
		e := &rubicon.Error{
			Method:     methodOrGet(c.req.Method),
			URL:        rubicon.RedactURL(c.req.URL),
			Phase:      rubicon.NotSent,
			Outcome:    rubicon.NotApplied,
			StatusCode: prev.StatusCode,
			Reason: fmt.Sprintf("not sent: the answer %d to %s redirected it to another origin, %s, and a request that may have an effect is never sent to another origin with its body, key and credentials",
				prev.StatusCode, originOf(prev.Request.URL), originOf(c.req.URL)),
		}
		c.ended(e.Outcome, e)
		return e
	}
	c.header = withoutCredentials(c.header, c.t.keyHeader)
	return nil
}

// SameOrigin reports whether a and b have one origin: the same scheme,
// host and port, a missing port being the scheme's own. It is the rule by
// which the Transport decides where credentials may go.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + u.Host
}

// credentialWords mark header names that carry a credential or a key:
// Authorization, X-Api-Key, X-Auth-Token, Api-Key, X-Amz-Security-Token,
// X-Session-Id, Idempotency-Key.
var credentialWords = [...]string{"auth", "key", "token", "secret", "password", "credential", "signature", "session"}

// withoutCredentials returns header without the headers that carry a
// credential or a key: Authorization and Proxy-Authorization, the
// idempotency key headers, and every header whose name speaks of a key, a
// token, a secret, a password, a credential, a signature, a session or
// authorization. Cookies are left to http.Client and its jar, which scope
// them by host, as browsers do.
func withoutCredentials(header http.Header, keyHeader string) http.Header {
	var out http.Header
	for name := range header {
		if !isCredential(name, keyHeader) {
			continue
		}
		if out == nil {
			out = header.Clone()
		}
		delete(out, name)
	}
	if out == nil {
		return header
	}
	return out
}

func isCredential(name, keyHeader string) bool {
	if strings.EqualFold(name, keyHeader) {
		return true
	}
	lower := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
