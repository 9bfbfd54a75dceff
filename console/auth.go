package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
)

// sessionLife is how long a sign-in lasts.
const sessionLife = 12 * time.Hour

// auth decides who a request comes from, and whether it may be served.
type auth struct {
	token  [sha256.Size]byte // the token's digest; zero when none is required
	needed bool
	env    string
	user   string
	cookie string
	realm  string

	mu       sync.Mutex
	sessions map[string]session
}

type session struct {
	name    string
	expires time.Time
}

func newAuth(opts Options) *auth {
	a := &auth{needed: opts.Token != "", env: opts.TokenEnv, user: opts.User, cookie: opts.Product + "_console",
		realm: `Bearer realm="` + opts.Product + ` console"`, sessions: map[string]session{}}
	if a.needed {
		a.token = sha256.Sum256([]byte(opts.Token))
	}
	return a
}

// valid reports whether token is the console's, in a time that does not
// depend on how much of it is right.
func (a *auth) valid(token string) bool {
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], a.token[:]) == 1
}

// require serves requests from who may see the console, and sends the
// others to the sign-in page (a browser's page loads) or answers 401 (a
// program, or a form sent without a session).
func (a *auth) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := a.visitor(r)
		if lv, _ := r.Context().Value(logKey).(*visitor); lv != nil {
			*lv = v
		}
		open := r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/")
		if ok || open {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey, v)))
			return
		}
		if r.Method == http.MethodGet && r.URL.Path != "/metrics" && r.Header.Get("Authorization") == "" {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", a.realm)
		Fail(w, r, http.StatusUnauthorized, "Sign in first: open the console's page and give the token in $"+a.env+
			", or send it as Authorization: Bearer TOKEN.")
	})
}

// visitor returns who r comes from, and whether they may be served.
func (a *auth) visitor(r *http.Request) (visitor, bool) {
	if !a.needed {
		return visitor{name: a.user}, true
	}
	if scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") {
		// A program; it acts for no one by name.
		return visitor{}, a.valid(strings.TrimSpace(token))
	}
	c, err := r.Cookie(a.cookie)
	if err != nil {
		return visitor{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[c.Value]
	if !ok || time.Now().After(s.expires) {
		delete(a.sessions, c.Value)
		return visitor{}, false
	}
	return visitor{name: s.name, session: true}, true
}

// start signs name in: a new session, and its cookie.
func (a *auth) start(w http.ResponseWriter, r *http.Request, name string) {
	id := rand.Text() + rand.Text()
	now := time.Now()
	a.mu.Lock()
	for k, s := range a.sessions {
		if now.After(s.expires) {
			delete(a.sessions, k)
		}
	}
	a.sessions[id] = session{name: name, expires: now.Add(sessionLife)}
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: a.cookie, Value: id, Path: "/", MaxAge: int(sessionLife.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// end signs the request's session out.
func (a *auth) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(a.cookie); err == nil {
		a.mu.Lock()
		delete(a.sessions, c.Value)
		a.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: a.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// loginData is what the sign-in page shows.
type loginData struct {
	Next, Name, Problem, Env string
	Needed                   bool
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.renderLogin(w, r, http.StatusOK, loginData{Next: localPath(r.URL.Query().Get("next"))})
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, d loginData) {
	d.Env, d.Needed = s.opts.TokenEnv, s.auth.needed
	Render(w, r, status, "Sign in", s.pages, "login", d)
}

// login checks the token and the name given on the sign-in page, and
// starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		Fail(w, r, http.StatusBadRequest, "The sign-in form could not be read.")
		return
	}
	d := loginData{Next: localPath(r.PostForm.Get("next")), Name: strings.TrimSpace(r.PostForm.Get("name"))}
	if !s.auth.needed {
		http.Redirect(w, r, d.Next, http.StatusSeeOther)
		return
	}
	switch {
	case !s.auth.valid(r.PostForm.Get("token")):
		s.log.Warn("sign-in refused: wrong token", "remote", r.RemoteAddr)
		d.Problem = "That is not the token this console was started with ($" + s.opts.TokenEnv + ")."
	case !goodName(d.Name):
		d.Problem = "Give your name: the journal records who settles what. Letters, digits, spaces and . _ @ - only, up to 80 characters."
	}
	if d.Problem != "" {
		s.renderLogin(w, r, http.StatusUnauthorized, d)
		return
	}
	s.auth.start(w, r, d.Name)
	s.log.Info("signed in", "user", d.Name, "remote", r.RemoteAddr)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	s.auth.end(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// goodName reports whether name may name a person in the journal.
func goodName(name string) bool {
	if name == "" || len(name) > 80 {
		return false
	}
	for _, c := range name {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && !strings.ContainsRune(" ._@-'", c) {
			return false
		}
	}
	return true
}

// localPath returns p if it is a path on this console, else "/": a
// sign-in never sends a person to another site.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}
