package toolgate

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// credentials are a caller's credentials: each configured secret, read
// once when the caller is made, and the OAuth2 tokens obtained with them.
type credentials struct {
	// secrets are the secrets by the setting that gives them
	// (upstream.auth, upstream.schemes.NAME).
	secrets map[string]string
	// oauth are the token sources of the oauth2 settings, by setting.
	oauth map[string]*oauthSource
	// every is upstream.auth's, added to every request; nil for none.
	every *config.Auth
}

// readSecret reads the secret a gives at setting: the environment
// variable a.Env, or the file a.File, which only its owner may read.
func readSecret(a config.Auth, setting string, getenv func(string) string) (string, error) {
	var secret string
	if a.File != "" {
		data, err := secretFile(a.File)
		if err != nil {
			return "", fmt.Errorf("%s: %v", setting, err)
		}
		secret = data
	} else {
		if getenv != nil {
			secret = getenv(a.Env)
		}
		if secret == "" {
			return "", fmt.Errorf("%s needs $%s, which is not set", setting, a.Env)
		}
	}
	switch {
	case !httpguts.ValidHeaderFieldValue(secret):
		return "", fmt.Errorf("%s: the secret in %s has a line break or another control character; write it on one line", setting, a.Secret())
	case a.Type == config.AuthBasic && !strings.Contains(secret, ":"):
		return "", fmt.Errorf("%s: the secret in %s is for basic authentication, which takes user:password (RFC 7617): "+
			"it has no colon; write the user, a colon, and the password (which may be empty)", setting, a.Secret())
	}
	return secret, nil
}

// maxSecretFile bounds a file that holds a secret.
const maxSecretFile = 64 << 10

// secretFile reads a secret from path, a regular file that only its owner
// may read or write (mode 0600 or 0400): a secret others can read is no
// secret. Trailing line breaks and spaces are dropped.
func secretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("the secret's file %s does not exist", path)
		case errors.Is(err, fs.ErrPermission):
			return "", fmt.Errorf("the secret's file %s cannot be read: permission denied", path)
		}
		return "", fmt.Errorf("the secret's file %s: %v", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("the secret's file %s: %v", path, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("the secret's file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("the secret's file %s may be read by others (mode %04o): make it its owner's only, chmod 600 %s", path, perm, path)
	}
	data := make([]byte, maxSecretFile+1)
	n, err := f.Read(data)
	if err != nil && n == 0 {
		return "", fmt.Errorf("the secret's file %s is empty", path)
	}
	if n > maxSecretFile {
		return "", fmt.Errorf("the secret's file %s is larger than %d KiB: is it the right file?", path, maxSecretFile>>10)
	}
	s := strings.TrimRight(string(data[:n]), "\r\n\t ")
	if s == "" {
		return "", fmt.Errorf("the secret's file %s is empty", path)
	}
	return s, nil
}

// newCredentials reads the secrets of every setting cat's tools use, and
// of upstream.auth (a scheme's that no operation uses is not read), and
// readies their OAuth2 token sources, whose token
// endpoints are resolved against base. A document's token endpoint on
// another origin than base's receives the client's secret only if the
// configuration names it too.
func newCredentials(cat *Catalog, up config.Upstream, base *url.URL, getenv func(string) string) (*credentials, []string, error) {
	c := &credentials{secrets: map[string]string{}, oauth: map[string]*oauthSource{}}
	settings := map[string]SchemeUse{}
	if up.Auth.Type != config.AuthNone && up.Auth.Type != "" {
		a := up.Auth
		c.every = &a
		settings["upstream.auth"] = SchemeUse{Auth: a, Setting: "upstream.auth"}
	}
	for _, t := range cat.Tools {
		for _, u := range t.Auth.Uses {
			if prev, seen := settings[u.Setting]; !seen || prev.scheme == nil {
				settings[u.Setting] = u
			}
		}
	}
	var derived []string
	for _, setting := range slices.Sorted(maps.Keys(settings)) {
		u := settings[setting]
		if !u.Auth.NeedsSecret() {
			continue
		}
		secret, err := readSecret(u.Auth, setting, getenv)
		if err != nil {
			return nil, nil, err
		}
		c.secrets[setting] = secret
		if u.Auth.Type == config.AuthBasic {
			_, pass, _ := strings.Cut(secret, ":")
			derived = append(derived, pass)
		}
		if u.Auth.Type == config.AuthOAuth2 {
			src, err := newOAuthSource(u, secret, base)
			if err != nil {
				return nil, nil, err
			}
			c.oauth[setting] = src
		}
	}
	return c, derived, nil
}

// placement is one credential placed in a request: a header, a query
// parameter or a cookie, and its value as sent.
type placement struct {
	in, name, value string
	// what names it for a person: "the header Authorization (bearerAuth)".
	what string
}

// callAuth is what authenticates one call: the credentials added to its
// request as it is sent to origin, the form fields that carry one, and
// a redactor that knows the call's tokens too.
type callAuth struct {
	origin     *url.URL
	placements []placement
	// fields are the form fields that carry a credential, by name.
	fields map[string]string
	redact *redactor
}

// named lists what the call's credentials are, for a person: never their
// values.
func (a *callAuth) named() []string {
	var out []string
	for _, p := range a.placements {
		out = append(out, p.what)
	}
	for _, name := range slices.Sorted(maps.Keys(a.fields)) {
		out = append(out, "the form field "+name)
	}
	return out
}

// clientTokenKey marks a context with the bearer token the MCP client
// presented.
type clientTokenKey struct{}

// WithClientToken returns ctx carrying token, the bearer token the MCP
// client presented with its request, for schemes configured to forward
// it (type forward).
func WithClientToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, clientTokenKey{}, token)
}

// clientToken returns the bearer token of an Authorization header, or "".
func clientToken(h http.Header) string {
	scheme, token, _ := strings.Cut(h.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authorize returns what authenticates a call of t: each scheme its
// requirement uses, with the secret, the token obtained for its scopes or
// the MCP client's, and upstream.auth's, placed where the scheme says;
// the operation's parameters and form fields that carry a credential
// filled with it. Nothing is sent to the upstream here; a token endpoint
// may be asked for a token.
func (c *Caller) authorize(ctx context.Context, t *Tool) (*callAuth, error) {
	// A call goes to the upstream's origin, or to one upstream.origins
	// lists (baseOf): its credentials go there and nowhere else.
	a := &callAuth{origin: c.baseOf(t), redact: c.redact}
	var dynamic []string
	values := map[string]string{} // a scheme's credential, for the parameters that carry it
	placed := map[string]bool{}
	add := func(p placement) {
		key := p.in + ":" + p.name
		if p.in == "header" {
			key = p.in + ":" + http.CanonicalHeaderKey(p.name)
		}
		if !placed[key] {
			placed[key] = true
			a.placements = append(a.placements, p)
		}
	}
	for _, u := range t.Auth.Uses {
		value, err := c.credential(ctx, u.Auth, u.Setting, u.Scopes)
		if err != nil {
			return nil, err
		}
		if value == "" {
			continue // type none
		}
		if u.Auth.Type == config.AuthOAuth2 || u.Auth.Type == config.AuthForward {
			dynamic = append(dynamic, value)
		}
		values[u.Scheme] = value
		add(place(u.Auth, u.scheme, value))
	}
	if e := c.creds.every; e != nil {
		value, err := c.credential(ctx, *e, "upstream.auth", e.Scopes)
		if err != nil {
			return nil, err
		}
		if e.Type == config.AuthOAuth2 || e.Type == config.AuthForward {
			dynamic = append(dynamic, value)
		}
		add(place(*e, nil, value))
	}
	for _, p := range t.op.Parameters {
		v, ok := values[p.Credential]
		if p.Credential == "" || !ok {
			continue
		}
		add(placement{in: p.In, name: p.Name, value: tokenOf(v), what: fmt.Sprintf("the %s %s (%s)", placeWord(p.In), p.Name, p.Credential)})
	}
	if b := t.op.Body; b != nil {
		for field, scheme := range b.Credentials {
			if v, ok := values[scheme]; ok {
				if a.fields == nil {
					a.fields = map[string]string{}
				}
				a.fields[field] = tokenOf(v)
			}
		}
	}
	if len(dynamic) > 0 {
		a.redact = c.redact.with(dynamic...)
	}
	return a, nil
}

// tokenOf is a credential's token: a header value without its scheme
// ("Bearer ").
func tokenOf(v string) string {
	if scheme, token, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic")) {
		return token
	}
	return v
}

// credential returns the credential a gives at setting, for a call whose
// requirement names scopes: the secret, a token from the token endpoint,
// or the MCP client's token; "" for type none. A bearer-like credential
// comes as its Authorization value.
func (c *Caller) credential(ctx context.Context, a config.Auth, setting string, scopes []string) (string, error) {
	switch a.Type {
	case config.AuthNone, "":
		return "", nil
	case config.AuthForward:
		token, _ := ctx.Value(clientTokenKey{}).(string)
		if token == "" {
			return "", fmt.Errorf("%s forwards the MCP client's bearer token to the upstream, and this call came without one "+
				"(only Streamable HTTP carries it: send Authorization: Bearer TOKEN)", setting)
		}
		if !httpguts.ValidHeaderFieldValue(token) {
			return "", fmt.Errorf("the MCP client's bearer token has a control character")
		}
		return "Bearer " + token, nil
	case config.AuthOAuth2:
		src := c.creds.oauth[setting]
		if len(a.Scopes) > 0 {
			scopes = a.Scopes
		}
		tok, err := src.token(ctx, scopes)
		if err != nil {
			return "", err
		}
		return tok.Type() + " " + tok.AccessToken, nil
	case config.AuthBearer:
		return "Bearer " + c.creds.secrets[setting], nil
	case config.AuthBasic:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.creds.secrets[setting])), nil
	}
	return c.creds.secrets[setting], nil
}

// place says where the credential value of a goes for scheme s (nil for
// upstream.auth).
func place(a config.Auth, s *spec.SecurityScheme, value string) placement {
	in, name := "header", "Authorization"
	switch {
	case a.Type == config.AuthHeader:
		name = a.Header
	case a.Type == config.AuthAPIKey && s != nil && s.Type == spec.TypeAPIKey:
		in, name = s.In, s.Param
	case a.Type == config.AuthAPIKey:
		in, name = a.In, a.Name
	}
	what := fmt.Sprintf("the %s %s", placeWord(in), name)
	if s != nil {
		what += " (" + s.Name + ")"
	}
	return placement{in: in, name: name, value: value, what: what}
}

func placeWord(in string) string {
	switch in {
	case "query":
		return "query parameter"
	case "formData":
		return "form field"
	}
	return in
}

// authKey marks a request's context with what authenticates it.
type authKey struct{}

// withAuth returns ctx carrying a, which the caller's transport adds to
// the request as it is sent.
func withAuth(ctx context.Context, a *callAuth) context.Context {
	return context.WithValue(ctx, authKey{}, a)
}

// authTransport adds a call's credentials to each of its requests sent to
// the upstream's origin, right before it is sent, and to no other: a
// request that a redirect or anything else sends elsewhere goes without
// them.
type authTransport struct {
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a, _ := req.Context().Value(authKey{}).(*callAuth)
	if a == nil || len(a.placements) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	same := sameOrigin(req.URL, a.origin)
	var query, cookies []string
	for _, p := range a.placements {
		switch {
		case p.in == "header" && same:
			r.Header.Set(p.name, p.value)
		case p.in == "header":
			r.Header.Del(p.name)
		case p.in == "query" && same:
			query = append(query, pctEscape(p.name)+"="+pctEscape(p.value))
		case p.in == "cookie" && same:
			cookies = append(cookies, p.name+"="+p.value)
		}
	}
	if len(query) > 0 {
		if r.URL.RawQuery != "" {
			query = append([]string{r.URL.RawQuery}, query...)
		}
		r.URL.RawQuery = strings.Join(query, "&")
	}
	if len(cookies) > 0 {
		if c := r.Header.Get("Cookie"); c != "" {
			cookies = append([]string{c}, cookies...)
		}
		r.Header.Set("Cookie", strings.Join(cookies, "; "))
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

// earlyExpiry is how long before its expiry a token is replaced: a call
// never starts with a token about to lapse on its way.
const earlyExpiry = 30 * time.Second

// oauthSource gets tokens by OAuth2's client credentials flow, one per
// set of scopes, each kept until earlyExpiry before it expires.
type oauthSource struct {
	setting  string
	tokenURL *url.URL
	conf     clientcredentials.Config
	// ctx carries the client that talks to the token endpoint: to it
	// alone, following no redirect, so the client's secret goes nowhere
	// else.
	ctx context.Context

	mu       sync.Mutex
	byScopes map[string]oauth2.TokenSource
}

// newOAuthSource readies the token source of u, with the client's
// secret. The token endpoint is the configuration's token_url, else the
// scheme's, resolved against base; the scheme's is used only on base's
// origin, since the document alone must not send the secret elsewhere.
func newOAuthSource(u SchemeUse, secret string, base *url.URL) (*oauthSource, error) {
	raw, fromDoc := u.Auth.TokenURL, false
	if raw == "" && u.scheme != nil {
		raw, fromDoc = u.scheme.TokenURL, true
	}
	ref, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil, fmt.Errorf("%s: the token endpoint %q is not a URL: give token_url", u.Setting, raw)
	}
	tokenURL := base.ResolveReference(ref)
	if tokenURL.Scheme != "http" && tokenURL.Scheme != "https" {
		return nil, fmt.Errorf("%s: the token endpoint %s is not an http or https URL: give token_url", u.Setting, tokenURL.Redacted())
	}
	if fromDoc && !sameOrigin(tokenURL, base) {
		return nil, fmt.Errorf("%s: the document's token endpoint %s is on another origin than the upstream's, and the client's secret never goes to "+
			"a server only the document names: write token_url: %s in %s to send it there", u.Setting, tokenURL.Redacted(), tokenURL.Redacted(), u.Setting)
	}
	client := &http.Client{
		Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // the secret and the token stay with the endpoint
		},
	}
	return &oauthSource{setting: u.Setting, tokenURL: tokenURL,
		conf:     clientcredentials.Config{ClientID: u.Auth.ClientID, ClientSecret: secret, TokenURL: tokenURL.String()},
		ctx:      context.WithValue(context.Background(), oauth2.HTTPClient, client),
		byScopes: map[string]oauth2.TokenSource{}}, nil
}

// token returns a token for scopes, the one kept if it is still good for
// earlyExpiry, else a new one. It waits at most until ctx ends.
func (o *oauthSource) token(ctx context.Context, scopes []string) (*oauth2.Token, error) {
	sorted := slices.Sorted(slices.Values(scopes))
	key := strings.Join(sorted, " ")
	o.mu.Lock()
	src := o.byScopes[key]
	if src == nil {
		conf := o.conf
		conf.Scopes = sorted
		src = oauth2.ReuseTokenSourceWithExpiry(nil, conf.TokenSource(o.ctx), earlyExpiry)
		o.byScopes[key] = src
	}
	o.mu.Unlock()
	type got struct {
		tok *oauth2.Token
		err error
	}
	done := make(chan got, 1)
	go func() {
		tok, err := src.Token()
		done <- got{tok, err}
	}()
	select {
	case g := <-done:
		if g.err != nil {
			return nil, o.failed(g.err)
		}
		if g.tok.AccessToken == "" || !httpguts.ValidHeaderFieldValue(g.tok.AccessToken) {
			return nil, fmt.Errorf("%s: the token endpoint %s answered without a usable access token", o.setting, o.tokenURL.Redacted())
		}
		return g.tok, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no token from %s in time (%v)", o.setting, o.tokenURL.Redacted(), context.Cause(ctx))
	}
}

// failed says why no token came, without the client's secret.
func (o *oauthSource) failed(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		why := re.ErrorCode
		if re.ErrorDescription != "" {
			why += ": " + re.ErrorDescription
		}
		if why == "" {
			why = snippet(string(re.Body))
		}
		return fmt.Errorf("%s: the token endpoint %s refused the client credentials of %s: %s (%s)", o.setting, o.tokenURL.Redacted(),
			o.conf.ClientID, re.Response.Status, why)
	}
	return fmt.Errorf("%s: no token from %s: %v", o.setting, o.tokenURL.Redacted(), err)
}
