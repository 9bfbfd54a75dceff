package console_test

import (
	"bytes"
	"context"
	"html/template"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/version"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

const token = "0123456789abcdef-the-token"

// fixture is a console on loopback over a journal with one ambiguous
// operation.
type fixture struct {
	srv *httptest.Server
	j   *journal.Journal
	key string
	// later moves the store's clock ahead, in nanoseconds.
	later atomic.Int64
}

func newFixture(t *testing.T, opts console.Options) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{}
	clock := func() time.Time { return time.Now().Add(time.Duration(f.later.Load())) }
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "journal.db"), sqlstore.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	j := journal.New(db.JournalStore(), journal.Options{})
	key := "charge/order-7/a1"
	if _, err := j.Start(ctx, journal.NewOperation{Key: key, Kind: "charge", Subject: "order-7",
		Evidence: journal.Evidence{"arguments": `{"amount":1200,"note":"<b>bold</b>"}`}}, "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Record(ctx, key, journal.Report{Worker: "w1", To: journal.Ambiguous, Phase: rubicon.Sent, Detail: "answered 502 Bad Gateway",
		Evidence: journal.Evidence{"status": 502, "bytes_written": 181, "provider_request_id": "req_42"}}); err != nil {
		t.Fatal(err)
	}
	opts.Product = "test"
	opts.TokenEnv = "TEST_TOKEN"
	opts.Journal = j
	if opts.Work.Kind == "" {
		opts.Work = console.Work{Kind: "charge", Noun: "charge", Applied: "the card was charged", NotApplied: "it was not"}
	}
	c, err := console.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	f.srv, f.j, f.key = srv, j, key
	return f
}

// pastLease moves the store's clock past the lease the operation was
// sent under.
func (f *fixture) pastLease() { f.later.Store(int64(time.Hour)) }

// client is a browser-like client: it keeps cookies and does not follow
// redirects, so that tests see them.
func client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, header map[string]string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// sameOrigin is what a browser sends with a form of the console's own page.
var sameOrigin = map[string]string{"Sec-Fetch-Site": "same-origin"}

func (f *fixture) state(t *testing.T) journal.Operation {
	t.Helper()
	op, err := f.j.Get(context.Background(), f.key)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestSettleOnLoopback lists the ambiguous operation with its evidence,
// settles it through the form as the user who started the console, and
// finds the decision in the journal and the audit log.
func TestSettleOnLoopback(t *testing.T) {
	f := newFixture(t, console.Options{User: "ann"})
	c := client(t)
	list := do(t, c, "GET", f.srv.URL+"/ambiguous", nil, nil)
	for _, want := range []string{"order-7", "181", "502: answered 502 Bad Gateway", "req_42", "&lt;b&gt;bold&lt;/b&gt;",
		`href="/operation?key=charge%2forder-7%2fa1"`, "test " + template.HTMLEscapeString(version.Get().String()) + "</footer>"} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the list lacks %q:\n%s", want, list.body)
		}
	}
	if list.status != 200 || strings.Contains(list.body, "<b>bold</b>") {
		t.Fatalf("the list: %d\n%s", list.status, list.body)
	}
	page := do(t, c, "GET", f.srv.URL+"/operation?key="+url.QueryEscape(f.key), nil, nil)
	for _, want := range []string{`action="/settle"`, "the card was charged", "Recorded as settled by <strong>ann</strong>", "sending"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the operation's page lacks %q:\n%s", want, page.body)
		}
	}
	// A form without a note is refused, and keeps what was chosen.
	a := do(t, c, "POST", f.srv.URL+"/settle", url.Values{"key": {f.key}, "outcome": {"not_applied"}}, sameOrigin)
	if a.status != 400 || !strings.Contains(a.body, "in the note what you checked") || !strings.Contains(a.body, `value="not_applied" checked`) {
		t.Fatalf("no note: %d\n%s", a.status, a.body)
	}
	if f.state(t).State != journal.Ambiguous {
		t.Fatal("a refused form changed the journal")
	}
	// Not applied waits for the lease the charge was sent under, and says
	// until when.
	early := do(t, c, "POST", f.srv.URL+"/settle", url.Values{"key": {f.key}, "outcome": {"not_applied"}, "note": {"no charge in the dashboard"}}, sameOrigin)
	if early.status != 409 || !strings.Contains(early.body, "resolve it as not applied after then") || f.state(t).State != journal.Ambiguous {
		t.Fatalf("not applied within the lease: %d\n%s", early.status, early.body)
	}
	f.pastLease()
	a = do(t, c, "POST", f.srv.URL+"/settle", url.Values{"key": {f.key}, "outcome": {"not_applied"}, "note": {"no charge in the dashboard"},
		"name": {"mallory"}}, sameOrigin)
	if a.status != 303 || a.header.Get("Location") != "/operation?key="+url.QueryEscape(f.key) {
		t.Fatalf("settle: %d %v\n%s", a.status, a.header, a.body)
	}
	op := f.state(t)
	if op.State != journal.NotApplied || op.Resolution == nil || op.Resolution.By != "ann" || op.Resolution.Note != "no charge in the dashboard" ||
		op.Resolution.Evidence["through"] != "test console" {
		t.Fatalf("the journal after settling: %+v %+v", op, op.Resolution)
	}
	again := do(t, c, "POST", f.srv.URL+"/settle", url.Values{"key": {f.key}, "outcome": {"applied"}, "note": {"twice"}}, sameOrigin)
	if again.status != 409 || !strings.Contains(again.body, "resolved as not_applied by ann") {
		t.Fatalf("settling twice: %d\n%s", again.status, again.body)
	}
	audit := do(t, c, "GET", f.srv.URL+"/audit", nil, nil)
	if !strings.Contains(audit.body, "resolved: no charge in the dashboard") || !strings.Contains(audit.body, "<td>ann</td>") {
		t.Fatalf("the audit log:\n%s", audit.body)
	}
	if empty := do(t, c, "GET", f.srv.URL+"/ambiguous", nil, nil); !strings.Contains(empty.body, "No charge is ambiguous") {
		t.Fatalf("the list once settled:\n%s", empty.body)
	}
	if a := do(t, c, "GET", f.srv.URL+"/operation?key=nope", nil, nil); a.status != 404 || !strings.Contains(a.body, `no charge with key &#34;nope&#34;`) {
		t.Fatalf("an unknown key: %d\n%s", a.status, a.body)
	}
}

// TestCrossSiteRefused sends the settle form as another site's page
// would: refused, and the journal unchanged.
func TestCrossSiteRefused(t *testing.T) {
	f := newFixture(t, console.Options{User: "ann"})
	form := url.Values{"key": {f.key}, "outcome": {"applied"}, "note": {"forged"}}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		{"Origin": "https://evil.example"}, // an older browser: no Sec-Fetch-Site
	} {
		a := do(t, client(t), "POST", f.srv.URL+"/settle", form, h)
		if a.status != 403 || !strings.Contains(a.body, "sent from another site") {
			t.Errorf("%v: %d\n%s", h, a.status, a.body)
		}
	}
	if f.state(t).State != journal.Ambiguous {
		t.Fatal("a request from another site changed the journal")
	}
}

// TestHostChecked refuses a request for another host name on loopback,
// as a page whose name was rebound to 127.0.0.1 would send.
func TestHostChecked(t *testing.T) {
	f := newFixture(t, console.Options{User: "ann"})
	req, _ := http.NewRequest("GET", f.srv.URL+"/ambiguous", nil)
	req.Host = "evil.example:" + strings.Split(f.srv.Listener.Addr().String(), ":")[1]
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "not for &#34;evil.example") {
		t.Fatalf("another host name: %d\n%s", resp.StatusCode, body)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]"} {
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("Host %s: %d", host, resp.StatusCode)
		}
	}
}

// TestHeaders checks the policy every page carries.
func TestHeaders(t *testing.T) {
	f := newFixture(t, console.Options{User: "ann"})
	a := do(t, client(t), "GET", f.srv.URL+"/ambiguous", nil, nil)
	csp := a.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
		t.Errorf("the policy allows scripts: %q", csp)
	}
	if a.header.Get("X-Content-Type-Options") != "nosniff" || a.header.Get("Cache-Control") != "no-store" || a.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers: %v", a.header)
	}
	if strings.Contains(a.body, "<script") || strings.Contains(a.body, "http://") || strings.Contains(a.body, "https://") {
		t.Errorf("the page loads or links something elsewhere:\n%s", a.body)
	}
	css := do(t, client(t), "GET", f.srv.URL+"/static/console.css", nil, nil)
	if css.status != 200 || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") || strings.Contains(css.body, "url(") {
		t.Errorf("the style sheet: %d %s", css.status, css.header.Get("Content-Type"))
	}
}

// TestToken signs in with the token and a name, which settling records;
// checks what is refused without it; and reads /metrics with the token as
// a bearer token.
func TestToken(t *testing.T) {
	f := newFixture(t, console.Options{Token: token, User: "the-operator"})
	c := client(t)
	a := do(t, c, "GET", f.srv.URL+"/ambiguous", nil, nil)
	if a.status != 303 || a.header.Get("Location") != "/login?next=%2Fambiguous" {
		t.Fatalf("a page without signing in: %d %v", a.status, a.header)
	}
	for _, path := range []string{"/metrics"} {
		if a := do(t, c, "GET", f.srv.URL+path, nil, nil); a.status != 401 || !strings.Contains(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s without the token: %d %v", path, a.status, a.header)
		}
	}
	form := url.Values{"key": {f.key}, "outcome": {"applied"}, "note": {"n"}, "name": {"eve"}}
	if a := do(t, c, "POST", f.srv.URL+"/settle", form, sameOrigin); a.status != 401 || f.state(t).State != journal.Ambiguous {
		t.Fatalf("settling without signing in: %d", a.status)
	}
	if a := do(t, c, "POST", f.srv.URL+"/login", url.Values{"token": {"wrong-token-wrong-token"}, "name": {"bo"}, "next": {"/ambiguous"}}, sameOrigin); a.status != 401 ||
		!strings.Contains(a.body, "not the token this console was started with ($TEST_TOKEN)") || a.header.Get("Set-Cookie") != "" {
		t.Fatalf("a wrong token: %d %v\n%s", a.status, a.header, a.body)
	}
	if a := do(t, c, "POST", f.srv.URL+"/login", url.Values{"token": {token}, "name": {""}}, sameOrigin); a.status != 401 || !strings.Contains(a.body, "Give your name") {
		t.Fatalf("no name: %d\n%s", a.status, a.body)
	}
	a = do(t, c, "POST", f.srv.URL+"/login", url.Values{"token": {token}, "name": {"Bo Li"}, "next": {"//evil.example/"}}, sameOrigin)
	cookie := a.header.Get("Set-Cookie")
	if a.status != 303 || a.header.Get("Location") != "/" || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("signing in: %d %v", a.status, a.header)
	}
	if a := do(t, c, "GET", f.srv.URL+"/ambiguous", nil, nil); a.status != 200 || !strings.Contains(a.body, "Bo Li") {
		t.Fatalf("signed in: %d\n%s", a.status, a.body)
	}
	if a := do(t, c, "POST", f.srv.URL+"/settle", form, sameOrigin); a.status != 303 {
		t.Fatalf("settling signed in: %d\n%s", a.status, a.body)
	}
	if op := f.state(t); op.Resolution == nil || op.Resolution.By != "Bo Li" {
		t.Fatalf("settled by %+v; want the name given on signing in", op.Resolution)
	}
	m := do(t, http.DefaultClient, "GET", f.srv.URL+"/metrics", nil, map[string]string{"Authorization": "Bearer " + token})
	for _, want := range []string{"test_ambiguous_open 0", `test_console_settled_total{outcome="applied"} 1`,
		`test_console_requests_total{code="303",route="POST /settle"} 1`, `test_build_info{commit=`} {
		if m.status != 200 || !strings.Contains(m.body, want) {
			t.Errorf("/metrics lacks %q: %d\n%s", want, m.status, m.body)
		}
	}
	if a := do(t, c, "POST", f.srv.URL+"/logout", url.Values{}, sameOrigin); a.status != 303 {
		t.Fatalf("signing out: %d", a.status)
	}
	if a := do(t, c, "GET", f.srv.URL+"/ambiguous", nil, nil); a.status != 303 {
		t.Fatalf("a page once signed out: %d", a.status)
	}
	if _, err := console.New(console.Options{Product: "x", Token: "short", TokenEnv: "X_TOKEN"}); err == nil || !strings.Contains(err.Error(), "$X_TOKEN is shorter than 16") {
		t.Fatalf("a short token: %v", err)
	}
}

// TestProductPages registers a product's page, with a settle form that
// takes a file through the product's own resolution.
func TestProductPages(t *testing.T) {
	page := template.Must(template.New("").Funcs(console.Funcs()).Parse(`{{define "hello"}}<p>Hello, {{.}}.</p>{{end}}`))
	var got struct {
		file, name string
		res        journal.Resolution
	}
	var j *journal.Journal
	f := newFixture(t, console.Options{User: "ann",
		Pages: []console.Page{{Title: "Hello", Path: "/hello", Handlers: map[string]http.Handler{
			"GET /hello": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				console.Render(w, r, 200, "Greeting", page, "hello", console.Who(r)+" <3")
			})}}},
		Work: console.Work{Kind: "charge", Noun: "charge", Fields: []console.Field{{Name: "receipt", Label: "Receipt", File: true}},
			Resolve: func(ctx context.Context, key string, res journal.Resolution, form *console.Form) (journal.Operation, error) {
				data, name, err := form.File("receipt")
				if err != nil {
					return journal.Operation{}, err
				}
				got.file, got.name, got.res = string(data), name, res
				return j.Resolve(ctx, key, res)
			}},
	})
	j = f.j
	c := client(t)
	if a := do(t, c, "GET", f.srv.URL+"/", nil, nil); a.status != 303 || a.header.Get("Location") != "/hello" {
		t.Fatalf("the home page: %d %v", a.status, a.header)
	}
	a := do(t, c, "GET", f.srv.URL+"/hello", nil, nil)
	if !strings.Contains(a.body, "<p>Hello, ann &lt;3.</p>") || !strings.Contains(a.body, `<a href="/hello" aria-current="page">Hello</a>`) ||
		!strings.Contains(a.body, "<title>Greeting · test console</title>") {
		t.Fatalf("the product's page:\n%s", a.body)
	}
	if op := do(t, c, "GET", f.srv.URL+"/operation?key="+url.QueryEscape(f.key), nil, nil); !strings.Contains(op.body, `enctype="multipart/form-data"`) ||
		!strings.Contains(op.body, `name="receipt" type="file"`) {
		t.Fatalf("the settle form has no file input:\n%s", op.body)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("key", f.key)
	mw.WriteField("outcome", "applied")
	mw.WriteField("note", "the receipt")
	fw, _ := mw.CreateFormFile("receipt", "receipt.txt")
	fw.Write([]byte("paid 12.00"))
	mw.Close()
	req, _ := http.NewRequest("POST", f.srv.URL+"/settle", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || got.file != "paid 12.00" || got.name != "receipt.txt" || got.res.By != "ann" || got.res.To != journal.Applied {
		t.Fatalf("settling with a file: %d %+v", resp.StatusCode, got)
	}
	if a := do(t, c, "GET", f.srv.URL+"/nowhere", nil, nil); a.status != 404 || !strings.Contains(a.body, "There is no page at /nowhere") {
		t.Fatalf("an unknown page: %d\n%s", a.status, a.body)
	}
}
