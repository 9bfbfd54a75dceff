// Package console is the web console that both products serve: a page a
// person opens in a browser to review and settle what a machine must not
// decide alone.
//
// The package holds what the products share: the layout, its style sheet
// and templates, embedded in the binary and rendered on the server (no
// JavaScript, and no request to any other site); sign-in with a bearer
// token and a session cookie; a strict Content-Security-Policy; protection
// of every state-changing request against other sites
// ([http.CrossOriginProtection]) and against DNS rebinding; the journal's
// ambiguous operations, each with its evidence, its history and a form to
// settle it; the journal's audit log; and /metrics in Prometheus's text
// format. A product adds its own pages ([Page]) and says how its ambiguous
// operations are settled ([Work]).
//
// It sits above the core (journal) and below the products: it imports no
// product, so neither binary links the other's pages.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rubicon-go/rubicon/internal/version"
	"github.com/rubicon-go/rubicon/journal"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Options configure a console.
type Options struct {
	// Product names the product in titles and metric names: "toolgate".
	Product string
	// Token, if not empty, is required: entered once on the sign-in page,
	// or sent as "Authorization: Bearer TOKEN" (for a scraper of
	// /metrics). It must be at least MinTokenLength characters.
	Token string
	// TokenEnv names the environment variable the token comes from, for
	// messages.
	TokenEnv string
	// User is who acts when no token is required: the user who started
	// the console. With a token, each person gives their name on signing
	// in.
	User string
	// Journal, if not nil, gives the pages of ambiguous work and the
	// audit log, for the operations of Work.Kind.
	Journal *journal.Journal
	Work    Work
	// Pages are the product's own pages, listed first in the navigation;
	// the first is the home page.
	Pages []Page
	// Registry is where the console's metrics are registered, and what
	// /metrics serves; nil makes one. The product registers its own there.
	Registry *prometheus.Registry
	// Log receives a structured line for each request and each decision;
	// nil discards them.
	Log *slog.Logger
}

// MinTokenLength is the shortest token accepted.
const MinTokenLength = 16

// Page is one of a product's pages.
type Page struct {
	// Title names the page in the navigation; Path is where it links.
	Title, Path string
	// Handlers serve the page's requests, by [http.ServeMux] pattern,
	// such as "GET /tools" and "POST /tools/preview". They write their
	// content with [Render].
	Handlers map[string]http.Handler
}

// Server is a console.
type Server struct {
	opts    Options
	layout  *template.Template
	pages   *template.Template
	handler http.Handler
	mux     *http.ServeMux
	nav     []navItem
	auth    *auth
	metrics *metrics
	log     *slog.Logger
	version string
}

type navItem struct{ Title, Path string }

// New returns a console with opts.
func New(opts Options) (*Server, error) {
	if opts.Product == "" {
		return nil, errors.New("console: Options.Product names the product")
	}
	if opts.Token != "" && len(opts.Token) < MinTokenLength {
		return nil, fmt.Errorf("the token in $%s is shorter than %d characters; use a random one (openssl rand -hex 32)", opts.TokenEnv, MinTokenLength)
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Work.Noun == "" {
		opts.Work.Noun = "operation"
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), log: opts.Log, auth: newAuth(opts), version: version.Get().String()}
	var err error
	if s.layout, err = template.New("layout.html").Funcs(Funcs()).ParseFS(templateFiles, "templates/layout.html"); err != nil {
		return nil, err
	}
	if s.pages, err = template.New("pages").Funcs(Funcs()).ParseFS(templateFiles, "templates/*.html"); err != nil {
		return nil, err
	}
	if s.metrics, err = newMetrics(opts.Registry, opts.Product); err != nil {
		return nil, err
	}
	for _, p := range opts.Pages {
		s.nav = append(s.nav, navItem{p.Title, p.Path})
		for pattern, h := range p.Handlers {
			s.handle(pattern, h)
		}
	}
	if opts.Journal != nil {
		s.nav = append(s.nav, navItem{"Ambiguous " + opts.Work.Noun + "s", "/ambiguous"}, navItem{"Audit log", "/audit"})
		s.handle("GET /ambiguous", http.HandlerFunc(s.ambiguous))
		s.handle("GET /operation", http.HandlerFunc(s.operation))
		s.handle("POST /settle", http.HandlerFunc(s.settle))
		s.handle("GET /audit", http.HandlerFunc(s.audit))
		if err := opts.Registry.Register(NewAmbiguousCollector(opts.Journal, opts.Work.Kind, opts.Product+"_ambiguous_open",
			"Operations whose outcome is unknown, for a person to settle.")); err != nil {
			return nil, err
		}
	}
	static, _ := fs.Sub(staticFiles, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.handle("GET /metrics", promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	s.handle("GET /login", http.HandlerFunc(s.loginPage))
	s.handle("POST /login", http.HandlerFunc(s.login))
	s.handle("POST /logout", http.HandlerFunc(s.logout))
	s.handle("GET /{$}", http.HandlerFunc(s.home))
	s.mux.Handle("/", s.counted("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Fail(w, r, http.StatusNotFound, "There is no page at "+r.URL.Path+".")
	})))
	s.handler = s.chain(s.mux)
	return s, nil
}

// handle registers h for pattern, counted under the pattern.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.counted(pattern, h))
}

// Handler returns the console's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the registry that /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.opts.Registry }

// Serve serves the console on ln until ctx ends; then it stops taking
// requests and gives those in flight 5 s.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	}
}

// home sends the person to the first page.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	if len(s.nav) == 0 {
		Fail(w, r, http.StatusNotFound, "This console has no pages.")
		return
	}
	http.Redirect(w, r, s.nav[0].Path, http.StatusSeeOther)
}

// ctxKey keys the request's context.
type ctxKey int

const (
	serverKey ctxKey = iota
	userKey
	logKey // a *visitor that the request's log line names
)

// visitor is who a request comes from.
type visitor struct {
	name    string
	session bool // signed in on the sign-in page, rather than by a header or on loopback
}

// Who returns the name of the person a request acts for: the name given
// on signing in, or the user who started the console when it needs no
// token; "" when it is not known (a bearer token sent by a program).
func Who(r *http.Request) string {
	v, _ := r.Context().Value(userKey).(visitor)
	return v.name
}

func server(r *http.Request) *Server {
	s, _ := r.Context().Value(serverKey).(*Server)
	return s
}

// layoutData is what the layout renders.
type layoutData struct {
	Product, Title string
	Version        string
	Nav            []navLink
	User           string
	Session        bool
	Body           template.HTML
}

type navLink struct {
	Title, Path string
	Current     bool
}

// Render writes a page of the console with status: the layout, titled
// title, around what the template name of t renders from data. t is a
// product's html/template set, with [Funcs] available to it.
func Render(w http.ResponseWriter, r *http.Request, status int, title string, t *template.Template, name string, data any) {
	s := server(r)
	if s == nil {
		http.Error(w, "console.Render: the request did not come through a console", http.StatusInternalServerError)
		return
	}
	var body strings.Builder
	if err := t.ExecuteTemplate(&body, name, data); err != nil {
		s.log.Error("render", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	s.write(w, r, status, title, template.HTML(body.String())) // html/template escaped it
}

// Fail writes an error page with status, saying msg.
func Fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s := server(r)
	if s == nil {
		http.Error(w, msg, status)
		return
	}
	Render(w, r, status, http.StatusText(status), s.pages, "error", msg)
}

// write writes the layout around body.
func (s *Server) write(w http.ResponseWriter, r *http.Request, status int, title string, body template.HTML) {
	v, _ := r.Context().Value(userKey).(visitor)
	d := layoutData{Product: s.opts.Product, Title: title, Version: s.version, User: v.name, Session: v.session, Body: body}
	if v.name != "" || s.opts.Token == "" {
		for _, n := range s.nav {
			current := r.URL.Path == n.Path || strings.HasPrefix(r.URL.Path, n.Path+"/") || r.URL.Path == "/operation" && n.Path == "/ambiguous"
			d.Nav = append(d.Nav, navLink{n.Title, n.Path, current})
		}
	}
	var out strings.Builder
	if err := s.layout.Execute(&out, d); err != nil {
		s.log.Error("render", "page", "layout", "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(out.String()))
}

// Funcs returns the functions the console's templates use, for a
// product's templates: when (a time, in UTC), text (any value as text),
// and join.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"when": when,
		"text": text,
		"join": strings.Join,
	}
}

// when writes t in UTC, to the second, or "" for the zero time.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
