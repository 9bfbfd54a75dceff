package toolgate

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TokenEnv is the environment variable that holds the bearer token HTTP
// clients must present. It is required when the server listens on an
// address other than loopback.
const TokenEnv = "TOOLGATE_TOKEN"

// MinTokenLength is the shortest bearer token accepted: a guessable token
// on a reachable port is no protection.
const MinTokenLength = 16

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	// Token, if not empty, must be presented as "Authorization: Bearer
	// <Token>" on every request.
	Token string
	// AllowedOrigins are the browser origins ("https://app.example") that
	// may call the endpoint. A request that carries any other Origin is
	// refused: it comes from a web page, and a page must not drive tools.
	AllowedOrigins []string
}

// HTTPHandler returns the Streamable HTTP endpoint for srv. Besides the
// SDK's own protection (a request to a loopback address must name a
// loopback Host, which defeats DNS rebinding), it refuses requests whose
// Origin is not allowed and, when a token is set, requests without it.
func HTTPHandler(srv *mcp.Server, opts HTTPOptions) (http.Handler, error) {
	allowed := map[string]bool{}
	for _, o := range opts.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("toolgate: allowed origin %q: give a scheme and a host, such as https://app.example", o)
		}
		allowed[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: 4 << 20,
	})
	if opts.Token != "" {
		if len(opts.Token) < MinTokenLength {
			return nil, fmt.Errorf("toolgate: the bearer token in $%s is shorter than %d characters; use a random one (openssl rand -hex 32)", TokenEnv, MinTokenLength)
		}
		// Compare digests so that the comparison takes the same time
		// whatever the length of the token presented.
		want := sha256.Sum256([]byte(opts.Token))
		verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			got := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{}, nil
		}
		// The token is a shared secret, not an issued one: it has no
		// expiry of its own.
		h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	}
	next := h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !allowed[strings.ToLower(strings.TrimSuffix(origin, "/"))] {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed; start toolgate with --allow-origin %s to allow it", origin, origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// Loopback reports whether addr (host:port) binds only to a loopback
// interface. An empty host binds to every interface.
func Loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("toolgate: listen address %q: give host:port, such as 127.0.0.1:8080", addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// ErrTokenRequired is returned when the endpoint would listen beyond
// loopback without a bearer token.
var ErrTokenRequired = errors.New("toolgate: listening on an address other than loopback requires a bearer token in $" + TokenEnv)
