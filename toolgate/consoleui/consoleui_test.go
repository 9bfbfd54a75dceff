package consoleui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/consoleui"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

type page struct {
	status   int
	location string
	body     string
}

// get and post ask the console as a browser on its own page would.
func (s *shop) get(t *testing.T, path string) page {
	t.Helper()
	return s.send(t, "GET", path, nil)
}

func (s *shop) post(t *testing.T, path string, form url.Values) page {
	t.Helper()
	return s.send(t, "POST", path, form)
}

func (s *shop) send(t *testing.T, method, path string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, s.console.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err) // Error, not Fatal: tests call this from goroutines too
		return page{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header.Get("Location"), string(b)}
}

var baseField = regexp.MustCompile(`name="base" value="([0-9a-f]+)"`)

// base returns the configuration's version that the tools page's form
// carries.
func (s *shop) base(t *testing.T) string {
	t.Helper()
	m := baseField.FindStringSubmatch(s.get(t, "/tools").body)
	if m == nil {
		t.Fatal("the tools page has no form to change the configuration")
	}
	return m[1]
}

// row returns the table row of tool on the tools page.
func row(t *testing.T, body, tool string) string {
	t.Helper()
	i := strings.Index(body, `<tr id="tool-`+tool+`">`)
	if i < 0 {
		t.Fatalf("no row for %s", tool)
	}
	end := strings.Index(body[i:], "</tr>")
	return body[i : i+end]
}

// TestToolsPage checks that every tool shows its class and reasons beside
// its exposure, rule, retry and deadline, and the settings as written.
func TestToolsPage(t *testing.T) {
	s := newShop(t, shopOptions{})
	p := s.get(t, "/tools")
	if p.status != 200 || !strings.Contains(p.body, "7 tools: 2 read, 2 write, 2 destructive, 1 privileged; <strong>4 exposed</strong>") ||
		!strings.Contains(p.body, "tools/list: <strong>1591 bytes</strong>, about 397 tokens") {
		t.Fatalf("the summary:\n%s", p.body)
	}
	// What each operation requires, and what the configuration gives: the
	// shop's configuration here gives nothing for its OAuth2 scheme.
	for _, want := range []string{`<tr><th scope="row">oauth</th><td>OAuth2 (client credentials)</td><td class="problem">nothing; write upstream.schemes.oauth: {type: oauth2, client_id: CLIENT_ID, env: OAUTH_CLIENT_SECRET}</td><td class="num">4</td></tr>`,
		`<p class="warning">4 exposed tools require oauth (OAuth2 (client credentials)), and the configuration gives nothing;`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for tool, want := range map[string][]string{
		"createOrder": {"class-write", "POST changes state", `exposed-yes">yes`, "tags.orders.expose", "only if not sent (ambiguous otherwise)",
			`<option value="" selected>not set`, "30s", `<span class="problem">MISSING: oauth</span>`, "oauth (OAuth2 (client credentials); scopes orders.read)"},
		"listOrders": {"class-read", `exposed-yes">yes`, "only if not sent (ambiguous otherwise)", `<option value="not_sent_only" selected>`, "10s",
			`value="10s"`},
		"deleteOrder": {"class-destructive", `DELETE removes`, `exposed-no">no`, "only if not sent (ambiguous otherwise)", `<option value="" selected>not set`},
		"listApiKeys": {"class-privileged", "it reads credentials", "built-in"},
		"getOrder":    {"class-read", "transient failures retried", `placeholder="not set"`},
	} {
		r := row(t, p.body, tool)
		for _, w := range want {
			if !strings.Contains(r, w) {
				t.Errorf("%s's row lacks %q:\n%s", tool, w, r)
			}
		}
	}
	if !strings.Contains(p.body, `<input name="tags.orders.expose" value="true"`) {
		t.Errorf("the tag's setting as written is not in its input")
	}
	f := s.get(t, "/tools?class=destructive")
	if strings.Count(f.body, `<tr id="tool-`) != 2 || !strings.Contains(f.body, "2 of 7 tools") {
		t.Errorf("the destructive tools: %d rows", strings.Count(f.body, `<tr id="tool-`))
	}
	for q, n := range map[string]int{"tag=orders": 4, "exposure=no": 3, "exposure=yes": 4, "tag=payments&exposure=yes": 0, "review=1": 0} {
		if got := strings.Count(s.get(t, "/tools?"+q).body, `<tr id="tool-`); got != n {
			t.Errorf("%s: %d rows, want %d", q, got, n)
		}
	}
}

// TestChangeWritten previews a change that enables a destructive tool,
// refuses to write it unconfirmed, and writes it once confirmed, keeping
// every comment.
func TestChangeWritten(t *testing.T) {
	s := newShop(t, shopOptions{})
	base := s.base(t)
	form := url.Values{"base": {base}, "tools.deleteOrder.expose": {"true"}, "tools.listOrders.retry": {"not_sent_only"},
		"tools.getOrder.deadline": {"10s"}, "tags.orders.expose": {"true"}}
	p := s.post(t, "/tools/preview", form)
	for _, want := range []string{
		`<span class="add">&#43;  deleteOrder: {expose: true}</span>`, `<span class="add">&#43;  getOrder: {deadline: 10s}</span>`,
		"no → <strong class=\"exposed-yes\">yes</strong>", "30s → <strong>10s</strong>",
		fmt.Sprintf("tools/list: 1591 → <strong>%d bytes</strong>", listBytes(t, shopConfig+"  deleteOrder: {expose: true}\n")), "4 → 5 tools exposed",
		"<strong>deleteOrder</strong> (destructive): its calls are sent without asking anyone",
		`name="enable" value="deleteOrder"`, `<input type="hidden" name="tools.deleteOrder.expose" value="true">`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the preview lacks %q", want)
		}
	}
	if p.status != 200 || strings.Contains(p.body, "listOrders.retry") {
		t.Fatalf("the preview (%d) carries settings that do not change:\n%s", p.status, p.body)

	}
	if s.configText(t) != shopConfig {
		t.Fatal("a preview wrote the file")
	}
	form.Set("base", base)
	w := s.post(t, "/tools/write", form)
	if w.status != 422 || !strings.Contains(w.body, "Nothing was written: this change enables deleteOrder") || s.configText(t) != shopConfig {
		t.Fatalf("writing unconfirmed: %d\n%s", w.status, w.body)
	}
	form.Set("enable", "deleteOrder")
	w = s.post(t, "/tools/write", form)
	if w.status != 303 || w.location != "/tools?written=1" {
		t.Fatalf("writing: %d\n%s", w.status, w.body)
	}
	want := shopConfig + "  deleteOrder: {expose: true}\n  getOrder: {deadline: 10s}\n"
	if got := s.configText(t); got != want {
		t.Fatalf("the file:\n%s\nwant\n%s", got, want)
	}
	after := s.get(t, "/tools?written=1")
	if !strings.Contains(after.body, "The configuration was written to") || !strings.Contains(row(t, after.body, "deleteOrder"), `exposed-yes">yes`) {
		t.Errorf("the tools page after writing:\n%s", after.body)
	}
	if m := s.get(t, "/metrics").body; !strings.Contains(m, "toolgate_console_config_writes_total 1") {
		t.Errorf("the write is not counted:\n%s", m)
	}
	// The form was made from the file before the change: refused.
	if again := s.post(t, "/tools/write", form); again.status != 409 || !strings.Contains(again.body, "changed since this page was made") {
		t.Errorf("a form from before the change: %d\n%s", again.status, again.body)
	}
}

// TestChangeRefused checks changes the loader refuses, and a console
// without a configuration file.
func TestChangeRefused(t *testing.T) {
	s := newShop(t, shopOptions{})
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"tools.createOrder.deadline": {"soon"}}, `line 11: tools.createOrder.deadline is &#34;soon&#34;; give a duration such as 30s or 2m, up to 1h`},
		{url.Values{"tags.orders.expose": {"[read, everything]"}}, `tags.orders.expose names &#34;everything&#34;, which is not a risk class`},
		{url.Values{"tags.orders.retry": {"opted_in"}}, "Nothing to change"}, // not a setting the page changes
		{url.Values{"tags.orders.expose": {"{"}}, "which is not a YAML value"},
	} {
		c.form.Set("base", s.base(t))
		p := s.post(t, "/tools/write", c.form)
		if !strings.Contains(p.body, c.want) || strings.Contains(p.body, `action="/tools/write"`) {
			t.Errorf("%v: %d, no %q (or a write button):\n%s", c.form, p.status, c.want, p.body)
		}
		if s.configText(t) != shopConfig {
			t.Fatalf("%v was written", c.form)
		}
	}
	ro := newShop(t, shopOptions{noConfig: true})
	p := ro.get(t, "/tools")
	if strings.Contains(p.body, `action="/tools/preview"`) || !strings.Contains(p.body, "start the console with <code>--config FILE</code>") {
		t.Errorf("without a configuration the page offers changes:\n%s", p.body)
	}
	if w := ro.post(t, "/tools/write", url.Values{"tools.deleteOrder.expose": {"true"}}); w.status != 409 || !strings.Contains(w.body, "without --config FILE") {
		t.Errorf("writing without a configuration: %d\n%s", w.status, w.body)
	}
}

// listBytes is the size of the shop's tools/list under the configuration
// cfg, as serve would answer it.
func listBytes(t *testing.T, cfg string) int {
	t.Helper()
	c, err := config.Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Load(shopSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, c)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cat.ListJSON()
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestWritesOneAtATime sends two changes made from the same file at once:
// one is written, the other refused, and neither is lost half-way.
func TestWritesOneAtATime(t *testing.T) {
	s := newShop(t, shopOptions{})
	base := s.base(t)
	results := make(chan page, 2)
	for _, deadline := range []string{"11s", "12s"} {
		go func() {
			results <- s.post(t, "/tools/write", url.Values{"base": {base}, "tools.getOrder.deadline": {deadline}})
		}()
	}
	a, b := <-results, <-results
	if a.status > b.status {
		a, b = b, a
	}
	if a.status != 303 || b.status != 409 {
		t.Fatalf("two writes from one file: %d and %d", a.status, b.status)
	}
	got := s.configText(t)
	if got != shopConfig+"  getOrder: {deadline: 11s}\n" && got != shopConfig+"  getOrder: {deadline: 12s}\n" {
		t.Fatalf("the file:\n%s", got)
	}
}

// TestRuleNamedByOperationID reviews a tool whose configuration names it
// by its operationId, which is not a valid tool name: the page shows the
// rule as written, and a change edits that rule instead of adding a
// second one for the same tool, which the loader would refuse.
func TestRuleNamedByOperationID(t *testing.T) {
	const doc = `openapi: 3.0.3
info: {title: orders, version: "1"}
paths:
  /orders:
    get:
      operationId: orders/list
      responses: {"200": {description: the orders}}
`
	const cfg = "tools:\n  orders/list: {deadline: 10s}   # kept by name\n"
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("openapi.yaml", []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("toolgate.yaml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := spec.Load("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(context.Background(), filepath.Join(dir, "journal.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ui, err := consoleui.New(consoleui.Options{Doc: d, SpecPath: "openapi.yaml", ConfigPath: "toolgate.yaml", Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Options{Product: "toolgate", TokenEnv: toolgate.TokenEnv, User: "ann",
		Journal: journal.New(db.JournalStore(), journal.Options{}), Work: consoleui.Work(), Pages: ui.Pages(), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	s := &shop{console: httptest.NewServer(c.Handler()), configPath: "toolgate.yaml"}
	t.Cleanup(s.console.Close)

	r := row(t, s.get(t, "/tools").body, "orders_list")
	if !strings.Contains(r, `name="tools.orders/list.deadline" value="10s"`) {
		t.Fatalf("the rule as written is not in the tool's row:\n%s", r)
	}
	form := url.Values{"base": {s.base(t)}, "tools.orders/list.deadline": {"20s"}}
	if w := s.post(t, "/tools/write", form); w.status != 303 {
		t.Fatalf("writing: %d\n%s", w.status, w.body)
	}
	if got, want := s.configText(t), "tools:\n  orders/list: {deadline: 20s} # kept by name\n"; got != want {
		t.Fatalf("the file:\n%s\nwant\n%s", got, want)
	}
}
