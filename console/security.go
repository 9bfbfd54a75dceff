package console

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// contentPolicy allows the console's own style sheet and images and
// nothing else: no script at all, no frame, no form sent elsewhere.
const contentPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// chain wraps h with what every request goes through, outermost first:
// the log line, the security headers, the check of the Host against DNS
// rebinding, the protection of state-changing requests against other
// sites, and sign-in.
func (s *Server) chain(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("refused a request from another site", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"),
			"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		Fail(w, r, http.StatusForbidden, "This request was sent from another site, or from a page the console did not serve, "+
			"and the console changes nothing on such a request. Open the console itself and send the form from there.")
	}))
	h = s.auth.require(h)
	h = cop.Handler(h)
	h = s.checkHost(h)
	return s.logged(secured(h))
}

// secured sets the headers that keep the console's pages to themselves.
func secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			// Pages show the journal and the configuration: keep them out
			// of caches.
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// checkHost refuses, on a loopback address, a request whose Host is not
// a loopback name: a page of another site whose name was pointed at
// 127.0.0.1 (DNS rebinding) would be the console's own origin.
func (s *Server) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), serverKey, s))
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if local != nil {
			if host, _, err := net.SplitHostPort(local.String()); err == nil && isLoopback(host) && !isLoopback(hostName(r.Host)) {
				s.log.Warn("refused a request for another host name on loopback", "host", r.Host, "path", r.URL.Path)
				Fail(w, r, http.StatusForbidden, fmt.Sprintf("The console listens on the loopback interface and answers only requests for it "+
					"(localhost, 127.0.0.1 or [::1]), not for %q.", r.Host))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// hostName returns the host of a Host header, without the port.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port) listens on a loopback
// interface only; an empty host listens on every interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopback(host)
}

// recorder keeps the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter, keeping the status.
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logged writes a structured line for each request: what was asked, the
// status, how long it took and for whom. Query strings are left out.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		var who visitor
		r = r.WithContext(context.WithValue(r.Context(), logKey, &who))
		h.ServeHTTP(rec, r)
		level := slog.LevelInfo
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			level = slog.LevelDebug
		}
		if rec.status >= 400 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"duration", time.Since(start).Round(time.Microsecond), "user", who.name, "remote", r.RemoteAddr)
	})
}
