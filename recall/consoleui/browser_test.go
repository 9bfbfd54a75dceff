package consoleui_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rubicon-go/rubicon/internal/browsertest"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/store"
)

// The tests in this file drive the console in headless Chromium, as a
// person would. With $TOOLGATE_SCREENSHOTS set they save the pages they
// see (docs/console has them).

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	return browsertest.Get(t, ctx, chromedp.Text(chromedp.CSS(css)))
}

// recovered is the transcript the provider kept for the request it
// charged, in its JSON, as a person downloads it.
const recovered = `{"text": "A paid call that may have gone through is never sent again.",
 "segments": [{"start": 0, "end": 2.5, "text": "A paid call that may have gone through"}, {"start": 2.5, "end": 5.8, "text": "is never sent again."}]}`

// TestBrowserSettlesAnAmbiguousRequest follows the demo's batch from the
// list of batches to its page, which shows both ambiguous requests, and
// settles the one the provider charged for with the transcript file it
// kept; then queues the other again with the button.
func TestBrowserSettlesAnAmbiguousRequest(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	ctx := browsertest.New(t)
	if status := browsertest.Load(t, ctx, chromedp.Navigate(x.console.URL+"/batches")); status != 200 {
		t.Fatalf("the batches: %d", status)
	}
	if row := text(t, ctx, "#batch-interviews"); !strings.Contains(row, "2 done") || !strings.Contains(row, "2 ambiguous") {
		t.Errorf("the batch's row: %q", row)
	}
	browsertest.Screenshot(t, ctx, "recall-batches")
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`#batch-interviews a`)))
	queue := text(t, ctx, "#ambiguous-requests")
	for _, key := range []string{x.charged, x.refused} {
		if !strings.Contains(queue, key) {
			t.Errorf("the batch's page does not list %s:\n%s", key, queue)
		}
	}
	if n := text(t, ctx, "#state-ambiguous td.num"); n != "2" {
		t.Errorf("%q recordings ambiguous; want 2", n)
	}
	browsertest.Screenshot(t, ctx, "recall-batch")

	settle := fmt.Sprintf(`//table[@id="ambiguous-requests"]//tr[contains(., %q)]//a[text()="Settle"]`, x.charged)
	browsertest.Load(t, ctx, chromedp.Click(chromedp.Search(settle)))
	if st := text(t, ctx, ".state"); !strings.HasSuffix(st, "ambiguous") || !strings.Contains(st, "interview") {
		t.Errorf("the request's page: %q", st)
	}
	file := filepath.Join(t.TempDir(), "recovered.json")
	if err := os.WriteFile(file, []byte(recovered), 0o644); err != nil {
		t.Fatal(err)
	}
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(`input[value="applied"]`)),
		chromedp.SendKeys(chromedp.CSS("#note"), "listed in the sandbox's charges"),
		chromedp.SetUploadFiles(chromedp.CSS("#f-transcript"), []string{file}))
	browsertest.Screenshot(t, ctx, "recall-request")
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/settle"] button`)))
	if st := text(t, ctx, ".state"); !strings.HasSuffix(st, "applied") {
		t.Errorf("the request's page once settled: %q", st)
	}
	op, err := x.a.Store().Operation(context.Background(), x.charged)
	if err != nil || op.State != journal.Applied || op.Resolution == nil || op.Resolution.By != "ann" {
		t.Fatalf("the journal: %+v, %v", op, err)
	}

	sha := strings.Split(x.charged, "/")[1]
	browsertest.Load(t, ctx, chromedp.Navigate(x.console.URL+"/search?q=never+sent&sandbox=1"))
	if hits := text(t, ctx, "#hits"); !strings.Contains(hits, "0:00:02") || !strings.Contains(hits, "is never sent again.") {
		t.Errorf("the search: %q", hits)
	}
	browsertest.Screenshot(t, ctx, "recall-search")
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`#hits a`)))
	if loc := browsertest.Get(t, ctx, chromedp.Location()); loc != x.console.URL+"/recordings/"+sha+"#t2500000" {
		t.Errorf("the match links to %s", loc)
	}
	if line := text(t, ctx, "tr:target"); !strings.Contains(line, "0:00:02") || !strings.Contains(line, "is never sent again.") {
		t.Errorf("the line the match links to: %q", line)
	}
	browsertest.Screenshot(t, ctx, "recall-transcript")

	x.settle(t, x.refused, "not_applied", "not in the sandbox's charges", "", nil)
	browsertest.Load(t, ctx, chromedp.Navigate(x.console.URL+"/batches/interviews"))
	browsertest.Load(t, ctx, chromedp.Click(chromedp.CSS(`#retry-failed button`)))
	if n := text(t, ctx, "#retry + p.notice"); !strings.Contains(n, "queued 0 files and 1 request again") {
		t.Errorf("after the button: %q", n)
	}
	if st := x.state(t, x.refused); st != journal.Pending {
		t.Errorf("the request settled as not applied is %s after the button", st)
	}
}

// TestBrowserRefusesAnotherSite sends the retry button's form from a page
// of another site, as an attacker's would be: the browser's request is
// refused, and nothing is queued.
func TestBrowserRefusesAnotherSite(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	x.settle(t, x.refused, "not_applied", "not charged", "", nil)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/batches/interviews/retry-failed"><button type="submit">Claim your prize</button></form>`,
			html.EscapeString(x.console.URL))
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
	if st := x.state(t, x.refused); st != journal.NotApplied {
		t.Fatalf("after a request from another site the request is %s", st)
	}
}

// TestBrowserShowsWhatIsDoneNow opens the batch's page while a run
// converts one of its recordings and an add adds files to it: the page
// shows the conversion's progress as a bar, at the share of the audio
// converted, and the add's counts.
func TestBrowserShowsWhatIsDoneNow(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	err := x.a.Store().RecordActivity(context.Background(), "live/run-1", store.ActivityChange{Put: []store.Activity{{Batch: batch,
		Subject: "aaaa1111bbbb2222", Path: "/rec/long interview.mp3", Stage: string(recall.StageConverting), Done: 2_520_000, Total: 6_000_000}}})
	if err == nil {
		err = x.a.Store().RecordActivity(context.Background(), "live/add-1", store.ActivityChange{Put: []store.Activity{{Batch: batch,
			Path: "/rec/new", Stage: recall.StageAdding, Done: 40, Total: 120, Bytes: 170_000_000}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t)
	browsertest.Load(t, ctx, chromedp.Navigate(x.console.URL+"/batches/interviews"))
	if now := text(t, ctx, "#activity"); !strings.Contains(now, "/rec/long interview.mp3") || !strings.Contains(now, "converting 42%") ||
		!strings.Contains(now, "adding: 40 of 120 files hashed, 170.0 MB") {
		t.Errorf("what is done now: %q", now)
	}
	if v := browsertest.Get(t, ctx, chromedp.Evaluate[float64](`document.querySelector("#activity progress").position`)); v < 0.41 || v > 0.43 {
		t.Errorf("the conversion's bar stands at %.2f; want 0.42", v)
	}
	browsertest.Screenshot(t, ctx, "recall-batch-now")
	// Chromium reads the page again by itself, as the Refresh header asks:
	// a mark left on this page's window is gone from the next.
	browsertest.Get(t, ctx, chromedp.Evaluate[bool](`window.readAgain = true`))
	deadline := time.Now().Add(45 * time.Second)
	for browsertest.Get(t, ctx, chromedp.Evaluate[bool](`window.readAgain === true`)) {
		if time.Now().After(deadline) {
			t.Fatal("the batch's page was not read again while work goes on")
		}
		time.Sleep(500 * time.Millisecond)
	}
}
