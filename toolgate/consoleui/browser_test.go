package consoleui_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rubicon-go/rubicon/internal/browsertest"
	"github.com/rubicon-go/rubicon/journal"
)

// The tests in this file drive the console in headless Chromium, as a
// person would. With $TOOLGATE_SCREENSHOTS set they save the pages they
// see (docs/console has them).

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	return browsertest.Get(t, ctx, chromedp.Text(chromedp.CSS(css)))
}

// TestBrowserReviewsTheTools opens the tools page: each of the example
// shop's tools, its risk class in the same row as its exposure and retry.
func TestBrowserReviewsTheTools(t *testing.T) {
	s := newShop(t, shopOptions{})
	ctx := browsertest.New(t)
	if status := browsertest.Load(t, ctx, chromedp.Navigate(s.console.URL+"/tools")); status != 200 {
		t.Fatalf("the tools page: %d", status)
	}
	for tool, want := range map[string][3]string{ // risk, exposed, retry
		"createOrder": {"write", "yes", "only if not sent (ambiguous otherwise)"},
		"deleteOrder": {"destructive", "no", "only if not sent (ambiguous otherwise)"},
		"getCategory": {"write", "yes", "only if not sent (ambiguous otherwise)"},
		"getOrder":    {"read", "yes", "transient failures retried"},
		"listApiKeys": {"privileged", "no", "only if not sent (ambiguous otherwise)"},
		"listOrders":  {"read", "yes", "only if not sent (ambiguous otherwise)"},
		"refundOrder": {"destructive", "no", "only if not sent (ambiguous otherwise)"},
	} {
		row := "#tool-" + tool
		risk, exposed, retry := text(t, ctx, row+" td.risk"), text(t, ctx, row+" td.exposed"), text(t, ctx, row+" td.retry")
		if !strings.HasPrefix(risk, want[0]) || !strings.HasPrefix(exposed, want[1]) || !strings.HasPrefix(retry, want[2]) {
			t.Errorf("%s: risk %q, exposed %q, retry %q; want %q", tool, risk, exposed, retry, want)
		}
	}
	if rows := browsertest.Get(t, ctx, chromedp.Nodes(chromedp.CSSAll("#tools tbody tr"))); len(rows) != 7 {
		t.Errorf("%d rows; want the shop's 7 tools", len(rows))
	}
	if sum := text(t, ctx, "#summary"); !strings.Contains(sum, "tools/list: 1591 bytes, about 397 tokens") {
		t.Errorf("the summary: %q", sum)
	}
	browsertest.Screenshot(t, ctx, "tools")
	// The filters work without a script: a form that asks again.
	browsertest.Do(t, ctx, chromedp.SetValue(chromedp.CSS(`select[name="class"]`), "destructive"))
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`form[role="search"] button`)))
	if rows := browsertest.Get(t, ctx, chromedp.Nodes(chromedp.CSSAll("#tools tbody tr"))); len(rows) != 2 {
		t.Errorf("filtered by class: %d rows; want 2", len(rows))
	}
	if loc := browsertest.Get(t, ctx, chromedp.Location()); !strings.Contains(loc, "class=destructive") {
		t.Errorf("filtered at %s", loc)
	}
}

// TestBrowserChangesExposure changes a destructive tool's exposure on the
// page, reviews the diff, confirms, and finds the file written with its
// comments.
func TestBrowserChangesExposure(t *testing.T) {
	s := newShop(t, shopOptions{})
	ctx := browsertest.New(t)
	browsertest.Load(t, ctx, chromedp.Navigate(s.console.URL+"/tools"))
	browsertest.Do(t, ctx, chromedp.SetValue(chromedp.CSS(`select[name="tools.deleteOrder.expose"]`), "confirm"))
	if status := browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`#changes button[type="submit"]`))); status != 200 {
		t.Fatalf("the preview: %d", status)
	}
	if c := text(t, ctx, "#what-changes"); !strings.Contains(c, "deleteOrder") || !strings.Contains(c, "no → confirm") {
		t.Errorf("what changes: %q", c)
	}
	if d := text(t, ctx, "#diff"); !strings.Contains(d, "+  deleteOrder: {expose: confirm}") {
		t.Errorf("the diff: %q", d)
	}
	if w := text(t, ctx, "#write .warning"); !strings.Contains(w, "deleteOrder (destructive): a person accepts each call before it is sent") {
		t.Errorf("the warning: %q", w)
	}
	if s.configText(t) != shopConfig {
		t.Fatal("the preview wrote the file")
	}
	browsertest.Screenshot(t, ctx, "preview")
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(`input[name="enable"]`)))
	if status := browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`#write button[type="submit"]`))); status != 200 {
		t.Fatalf("writing: %d", status) // the page the write sends the browser to
	}
	if n := text(t, ctx, "p.notice"); !strings.Contains(n, "The configuration was written to "+s.configPath) {
		t.Errorf("after writing: %q", n)
	}
	if got, want := s.configText(t), shopConfig+"  deleteOrder: {expose: confirm}\n"; got != want {
		t.Errorf("the file:\n%s\nwant\n%s", got, want)
	}
	if e := text(t, ctx, "#tool-deleteOrder td.exposed"); !strings.HasPrefix(e, "confirm") {
		t.Errorf("deleteOrder once written: %q", e)
	}
}

// TestBrowserSettlesACall settles the example's lost order through the
// form; the journal records it, and the same call is allowed again.
func TestBrowserSettlesACall(t *testing.T) {
	s := newShop(t, shopOptions{})
	key := s.loseAnOrder(t)
	ctx := browsertest.New(t)
	browsertest.Load(t, ctx, chromedp.Navigate(s.console.URL+"/ambiguous"))
	list := text(t, ctx, "main table")
	for _, want := range []string{"createOrder: POST /orders", `"sku":"B7"`, key} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	browsertest.Screenshot(t, ctx, "ambiguous")
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`main table a[href^="/operation"]`)))
	browsertest.Screenshot(t, ctx, "call")
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(`input[value="not_applied"]`)),
		chromedp.SendKeys(chromedp.CSS("#note"), "no order for B7 in listOrders"))
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/settle"] button`)))
	if st := text(t, ctx, ".state"); !strings.HasSuffix(st, "not_applied") {
		t.Errorf("the call's page once settled: %q", st)
	}
	op, err := s.j.Get(context.Background(), key)
	if err != nil || op.State != journal.NotApplied || op.Resolution == nil || op.Resolution.By != "ann" || op.Resolution.Note != "no order for B7 in listOrders" {
		t.Fatalf("the journal: %+v %+v, %v", op, op.Resolution, err)
	}
	effects := s.api.Effects()
	if r := s.call(t, "createOrder", lostB7); r.IsError || !strings.Contains(r.Text, `"sku":"B7"`) || s.api.Effects() != effects+1 {
		t.Fatalf("the same call once settled: %+v", r)
	}
	browsertest.Load(t, ctx, chromedp.Navigate(s.console.URL+"/audit"))
	if a := text(t, ctx, "main table"); !strings.Contains(a, "resolved: no order for B7 in listOrders") {
		t.Errorf("the audit log:\n%s", a)
	}
	browsertest.Screenshot(t, ctx, "audit")
}

// TestBrowserRefusesAnotherSite sends the settle form from a page of
// another site, as an attacker's would be: the browser's request is
// refused and the journal does not change.
func TestBrowserRefusesAnotherSite(t *testing.T) {
	s := newShop(t, shopOptions{})
	key := s.loseAnOrder(t)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/settle">
<input type="hidden" name="key" value="%s"><input type="hidden" name="outcome" value="not_applied">
<input type="hidden" name="note" value="forged"><button type="submit">Claim your prize</button></form>`,
			s.console.URL, html.EscapeString(key))
	}))
	defer evil.Close()
	ctx := browsertest.New(t)
	// localhost and 127.0.0.1 are different sites.
	browsertest.Load(t, ctx, chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)))
	if status := browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS("button"))); status != http.StatusForbidden {
		t.Errorf("the console answered the other site's form with %d", status)
	}
	if p := text(t, ctx, ".problem"); !strings.Contains(p, "sent from another site") {
		t.Errorf("the answer: %q", p)
	}
	if loc := browsertest.Get(t, ctx, chromedp.Location()); loc != s.console.URL+"/settle" {
		t.Errorf("the browser is at %s", loc)
	}
	if op, err := s.j.Get(context.Background(), key); err != nil || op.State != journal.Ambiguous {
		t.Fatalf("the journal after a request from another site: %s, %v", op.State, err)
	}
}

// TestBrowserSignsIn opens a console that needs a token: the sign-in page,
// then the page asked for, under the name given.
func TestBrowserSignsIn(t *testing.T) {
	const token = "0123456789abcdef-the-token"
	s := newShop(t, shopOptions{token: token})
	ctx := browsertest.New(t)
	browsertest.Load(t, ctx, chromedp.Navigate(s.console.URL+"/tools"))
	if loc := browsertest.Get(t, ctx, chromedp.Location()); loc != s.console.URL+"/login?next=%2Ftools" {
		t.Errorf("without signing in: %s", loc)
	}
	browsertest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#name"), "Bo Li"), chromedp.SendKeys(chromedp.CSS("#token"), token))
	browsertest.Screenshot(t, ctx, "sign-in")
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/login"] button`)))
	if who := text(t, ctx, ".who"); !strings.Contains(who, "Bo Li") {
		t.Errorf("signed in as %q", who)
	}
	if loc := browsertest.Get(t, ctx, chromedp.Location()); loc != s.console.URL+"/tools" {
		t.Errorf("after signing in: %s", loc)
	}
}
