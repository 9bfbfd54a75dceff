package toolgate

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

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
	// The server's own origin is always allowed.
	AllowedOrigins []string
	// Metrics, if not nil, answers GET /metrics (Prometheus's text
	// format), behind the same token and origin checks as MCP.
	Metrics http.Handler
	// ForwardClientToken says that the upstream's configuration forwards
	// each client's own bearer token (type forward): every request must
	// carry one, which the upstream, not toolgate, checks; Token must
	// then be empty, since the one Authorization header carries the
	// client's token.
	ForwardClientToken bool
}

// HTTPHandler returns the Streamable HTTP endpoint for srv, and /metrics
// when opts.Metrics is set. Besides the
// SDK's own protection (a request to a loopback address must name a
// loopback Host, which defeats DNS rebinding), it refuses requests whose
// Origin is neither the server's own nor allowed and, when a token is set,
// requests without it.
func HTTPHandler(srv *mcp.Server, opts HTTPOptions) (http.Handler, error) {
	allowed := map[string]bool{}
	for _, o := range opts.AllowedOrigins {
		origin, err := ParseOrigin(o)
		if err != nil {
			return nil, err
		}
		allowed[origin] = true
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: 4 << 20,
	})
	if opts.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", opts.Metrics)
		mux.Handle("/", h)
		h = mux
	}
	switch {
	case opts.Token != "" && opts.ForwardClientToken:
		return nil, ErrTokenAndForward
	case opts.Token != "":
		if len(opts.Token) < MinTokenLength {
			return nil, fmt.Errorf("the bearer token in $%s is shorter than %d characters; use a random one (openssl rand -hex 32)", TokenEnv, MinTokenLength)
		}
		h = requireToken(opts.Token, h)
	case opts.ForwardClientToken:
		h = requireClientToken(h)
	}
	next := h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if why := refuseOrigin(o, r, allowed); why != "" {
				http.Error(w, "Forbidden: "+why, http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	}), nil
}

// ParseOrigin checks an origin given to allow (--allow-origin) and returns
// it as browsers send it: scheme://host[:port], in lower case, without the
// scheme's default port.
func ParseOrigin(o string) (string, error) {
	switch o {
	case "null":
		return "", errors.New(`allowed origin "null": null is the origin of every local file, sandboxed frame and redirected request, ` +
			"so allowing it would allow them all; serve the page from an http or https origin and allow that one")
	case "*":
		return "", errors.New(`allowed origin "*": name each origin, such as https://app.example; a wildcard would let any web page drive the tools`)
	}
	origin, ok := normalOrigin(o)
	if !ok {
		return "", fmt.Errorf("allowed origin %q: give a scheme and a host, and nothing more, such as https://app.example or http://localhost:3000", o)
	}
	return origin, nil
}

// normalOrigin returns o as scheme://host[:port], in lower case, without
// the default port of http or https, or false if o is not an origin.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "http":
		host = strings.TrimSuffix(host, ":80")
	case u.Scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// refuseOrigin says why a request from a page of origin o is refused, or
// returns "" if it is not.
func refuseOrigin(o string, r *http.Request, allowed map[string]bool) string {
	if o == "null" {
		return `this request comes from a page with an opaque origin ("null": a local file, a sandboxed frame or a redirect), ` +
			"which cannot be told apart from any other such page, so toolgate allows none; serve the page from an http or https origin " +
			"and start toolgate with --allow-origin for that origin"
	}
	origin, ok := normalOrigin(o)
	if !ok {
		return fmt.Sprintf("the Origin header %q is not an origin (scheme://host[:port])", o)
	}
	if allowed[origin] || ownOrigin(origin, r) {
		return ""
	}
	return fmt.Sprintf("pages from %s may not call this server; if you trust them, start toolgate with --allow-origin %s", origin, origin)
}

// ownOrigin reports whether origin is the server's own: http, and the host
// and port the request came in on. Only toolgate serves at that origin,
// and it serves no pages, so no other page can claim it. On a loopback
// address the Host names it (localhost or the address, which the SDK
// already insists on); on any other, only the address does, since a name
// there could be an attacker's domain rebound to it.
func ownOrigin(origin string, r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	if origin == "http://"+strings.ToLower(local.String()) {
		return true
	}
	localHost, localPort, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopback(localHost) {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
	}
	self, _ := normalOrigin("http://" + r.Host)
	return port == localPort && isLoopback(host) && origin == self
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// realm names toolgate's protection space in WWW-Authenticate (RFC 6750).
const realm = `Bearer realm="toolgate"`

// requireToken refuses requests that do not carry token as a bearer
// token, with the challenge RFC 6750 describes.
func requireToken(token string, next http.Handler) http.Handler {
	// Compare digests so that the comparison takes the same time whatever
	// the length of the token presented.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(got) == "" {
			// No credentials: the challenge carries no error code.
			w.Header().Set("WWW-Authenticate", realm)
			http.Error(w, "Unauthorized: send the token in $"+TokenEnv+" as Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token", error_description="the token is not the one this server was started with"`)
			http.Error(w, "Unauthorized: the bearer token is not the one this server was started with ($"+TokenEnv+")", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireClientToken refuses requests that carry no bearer token, with
// the challenge RFC 6750 describes: the upstream checks the token each
// call forwards.
func requireClientToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if clientToken(r.Header) == "" {
			w.Header().Set("WWW-Authenticate", realm)
			http.Error(w, "Unauthorized: send your token for the upstream API as Authorization: Bearer TOKEN; toolgate forwards it with each call", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ErrTokenAndForward is returned when a server would both check its own
// bearer token and forward each client's to the upstream: one
// Authorization header cannot carry both.
var ErrTokenAndForward = errors.New("the configuration forwards each MCP client's bearer token to the upstream (type forward), so the Authorization header carries the " +
	"upstream's token, not toolgate's: unset $" + TokenEnv + "; every request must then carry the client's token, which the upstream checks")

// Loopback reports whether addr (host:port) binds only to a loopback
// interface. An empty host binds to every interface.
func Loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: give host:port, such as 127.0.0.1:8080", addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// ErrTokenRequired is returned when the endpoint would listen beyond
// loopback without a bearer token.
var ErrTokenRequired = errors.New("listening on an address other than loopback requires a bearer token in $" + TokenEnv +
	" (16 characters or more, such as the output of openssl rand -hex 32)")
