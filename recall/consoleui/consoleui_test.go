package consoleui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/store"
)

// section returns the part of body from the element with id to the end
// of its table (or the next heading).
func section(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("the page has no #%s:\n%s", id, body)
	}
	rest := body[i:]
	if end := strings.Index(rest, "</table>"); end >= 0 {
		return rest[:end]
	}
	return rest
}

// TestBatchPages: the list of batches and a batch's page show the demo's
// progress per state, its money against the estimate, and its two
// ambiguous requests with their evidence and a link to settle each.
func TestBatchPages(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	p := x.get(t, "/batches")
	row := section(t, p.body, "batch-"+batch)
	for _, want := range []string{`href="/batches/interviews"`, "2 done", "2 ambiguous", "$0.002800", "$0.001400 ambiguous"} {
		if !strings.Contains(row, want) {
			t.Errorf("the batch's row lacks %q:\n%s", want, row)
		}
	}
	p = x.get(t, "/batches/"+batch)
	if p.status != 200 {
		t.Fatalf("the batch's page: %d", p.status)
	}
	states := section(t, p.body, "states")
	for state, n := range map[string]string{"done": "2", "ambiguous": "2", "waiting": "0", "failed": "0", "refused_by_budget": "0"} {
		re := regexp.MustCompile(`(?s)id="state-` + state + `">.*?<td class="num">(?:<a [^>]*>)?(\d+)`)
		if m := re.FindStringSubmatch(states); m == nil || m[1] != n {
			t.Errorf("state %s: %v; want %s", state, m, n)
		}
	}
	money := section(t, p.body, "money-facts")
	for _, want := range []string{"none: <code>recall-archive run interviews --budget DOLLARS</code>", "$0.002800 in all, $0.001400 still to spend",
		"$0.001400, of which", "$0.001400 by ambiguous requests"} {
		if !strings.Contains(money, want) {
			t.Errorf("the money lacks %q:\n%s", want, money)
		}
	}
	queue := section(t, p.body, "ambiguous-requests")
	for _, key := range []string{x.charged, x.refused} {
		// html/template escapes the key's slashes in lower case.
		if !strings.Contains(queue, `href="/operation?key=`+strings.ReplaceAll(url.QueryEscape(key), "%2F", "%2f")+`"`) {
			t.Errorf("the queue has no link to settle %s:\n%s", key, queue)
		}
	}
	for _, want := range []string{"interview", "503", "sbx_", "$0.000700"} {
		if !strings.Contains(queue, want) {
			t.Errorf("the queue lacks %q:\n%s", want, queue)
		}
	}
	if !strings.Contains(p.body, `<form method="post" action="/batches/interviews/retry-failed"`) {
		t.Error("the page has no retry-failed form")
	}
	if n := strings.Count(section(t, p.body, "recording-list"), ">Transcript</a>"); n != 4 {
		t.Errorf("%d recordings listed; want 4", n)
	}
	if n := strings.Count(section(t, x.get(t, "/batches/"+batch+"?state=ambiguous").body, "recording-list"), ">Transcript</a>"); n != 2 {
		t.Errorf("%d ambiguous recordings listed; want 2", n)
	}
	if p := x.get(t, "/batches/nope"); p.status != 404 || !strings.Contains(p.body, `The archive has no batch named &#34;nope&#34;.`) {
		t.Errorf("a batch that does not exist: %d\n%s", p.status, p.body)
	}
}

// TestBatchNamesInAddresses: a batch whose name a URL must escape is
// linked to, and found, by its name.
func TestBatchNamesInAddresses(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	dir, _ := recordings(t)
	const name = "tapes <2024> #1 ?50%"
	if _, err := x.a.Add(context.Background(), name, []string{dir + "/interview 2.mp3"}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	path := "/batches/" + url.PathEscape(name)
	if p := x.get(t, "/batches"); !strings.Contains(p.body, `href="`+path+`"`) || !strings.Contains(p.body, "tapes &lt;2024&gt; #1 ?50%") {
		t.Fatalf("the list does not link to %s:\n%s", path, p.body)
	}
	if p := x.get(t, path); p.status != 200 || !strings.Contains(p.body, "<h1>Batch tapes &lt;2024&gt; #1 ?50%</h1>") {
		t.Errorf("%s: %d\n%s", path, p.status, p.body)
	}
}

// TestSettleWithTranscript settles the request the provider charged for
// with the transcript the provider kept, through the console's form: the
// hold is spent, the transcript kept and searchable at its times, and the
// audit log says who, through what, with which file.
func TestSettleWithTranscript(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	transcript := `{"text": "the harbour at dawn", "segments": [{"start": 0, "end": 2.5, "text": "the"}, {"start": 2.5, "end": 6, "text": "harbour at dawn"}]}`
	p := x.settle(t, x.charged, "applied", "listed in the provider's charges", "recovered.json", []byte(transcript))
	if p.status != 303 || !strings.HasPrefix(p.location, "/operation?key=") {
		t.Fatalf("settling: %d %s\n%s", p.status, p.location, p.body)
	}
	if st := x.state(t, x.charged); st != journal.Applied {
		t.Fatalf("the request is %s", st)
	}
	m, err := x.a.Money(context.Background(), batch)
	if err != nil || m.Spent != 2100 || m.Held != 700 || m.HeldAmbiguous != 700 {
		t.Errorf("the money once settled: %+v, %v; want 2100 spent and the other request's 700 held", m, err)
	}
	hist, err := x.a.Store().Journal().History(context.Background(), x.charged)
	if err != nil {
		t.Fatal(err)
	}
	last := hist[len(hist)-1]
	if last.Actor != "ann" || last.Evidence["through"] != "recall console" || last.Evidence["transcript_file"] != "recovered.json" {
		t.Errorf("the audit log's entry: %+v", last)
	}
	s := x.get(t, "/search?q=harbour+dawn&sandbox=1")
	hits := section(t, s.body, "hits")
	sha := strings.Split(x.charged, "/")[1]
	for _, want := range []string{`href="/recordings/` + sha + `#t2500000">0:00:02</a>`, "<mark>harbour</mark> at <mark>dawn</mark>"} {
		if !strings.Contains(hits, want) {
			t.Errorf("the search's match lacks %q:\n%s", want, hits)
		}
	}
	r := x.get(t, "/recordings/"+sha)
	if !strings.Contains(r.body, `<tr id="t2500000"><td class="when"><a href="#t2500000">0:00:02</a></td><td>harbour at dawn</td></tr>`) {
		t.Errorf("the transcript's page:\n%s", r.body)
	}
}

// TestSettleRefusals: a transcript with a request that was not applied, an
// empty transcript file, and a decision without a note are refused with
// what to do, and the request stays ambiguous, its money held.
func TestSettleRefusals(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	for _, c := range []struct {
		outcome, note, file, data string
		status                    int
		want                      string
	}{
		{"not_applied", "not charged", "t.txt", "some text", 422, "a transcript goes with Applied"},
		{"applied", "charged", "empty.txt", "", 422, "empty.txt: the transcript is empty"},
		{"applied", "charged", "binary.txt", "\xff\xfe\x00", 422, "binary.txt: the transcript is not UTF-8 text"},
		{"applied", "", "t.txt", "text", 400, "Say whether it was applied or not, and in the note what you checked."},
	} {
		p := x.settle(t, x.charged, c.outcome, c.note, c.file, []byte(c.data))
		if p.status != c.status || !strings.Contains(p.body, c.want) {
			t.Errorf("%s with %s: %d, want %d and %q\n%s", c.outcome, c.file, p.status, c.status, c.want, p.body)
		}
	}
	if st := x.state(t, x.charged); st != journal.Ambiguous {
		t.Errorf("the request is %s after refusals", st)
	}
	if m, _ := x.a.Money(context.Background(), batch); m.HeldAmbiguous != 1400 {
		t.Errorf("held by ambiguous requests after refusals: %d", m.HeldAmbiguous)
	}
}

// TestRetryFailedButton: the request settled as not applied is queued
// again by the button, as retry-failed --safe-only does, the other left
// ambiguous; from another site, the same request changes nothing.
func TestRetryFailedButton(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	if p := x.settle(t, x.refused, "not_applied", "not in the provider's charges", "", nil); p.status != 303 {
		t.Fatalf("settling: %d\n%s", p.status, p.body)
	}
	if p := x.post(t, "/batches/"+batch+"/retry-failed", "cross-site", url.Values{}); p.status != 403 {
		t.Errorf("from another site: %d", p.status)
	}
	if st := x.state(t, x.refused); st != journal.NotApplied {
		t.Fatalf("after a request from another site the request is %s", st)
	}
	p := x.post(t, "/batches/"+batch+"/retry-failed", "same-origin", url.Values{})
	if p.status != 303 || p.location != "/batches/interviews?files=0&left=1&requests=1&retried=1#retry" {
		t.Fatalf("retry-failed: %d %s", p.status, p.location)
	}
	if st, other := x.state(t, x.refused), x.state(t, x.charged); st != journal.Pending || other != journal.Ambiguous {
		t.Fatalf("after retry-failed: %s and %s; want pending and ambiguous", st, other)
	}
	b := x.get(t, strings.TrimSuffix(p.location, "#retry"))
	if !strings.Contains(b.body, "retry-failed --safe-only queued 0 files and 1 request again, and left 1 ambiguous or in-flight request alone.") {
		t.Errorf("the page after retrying:\n%s", section(t, b.body, "retry"))
	}
	if rep := x.run(t); rep.Paid != 1 || rep.Ambiguous != 1 || rep.Done != 3 {
		t.Errorf("the run after retrying: %+v", rep)
	}
}

// TestMetrics: the archive's numbers are the database's; the provider's
// latency counts each answer the journal recorded once, runs after the
// first scrape included.
func TestMetrics(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	body := x.get(t, "/metrics").body
	for _, want := range []string{
		`recall_items{batch="interviews",state="done"} 2`,
		`recall_items{batch="interviews",state="ambiguous"} 2`,
		`recall_items{batch="interviews",state="waiting"} 0`,
		`recall_files{batch="interviews",state="added"} 5`,
		`recall_held_dollars{batch="interviews"} 0.0014`,
		`recall_held_ambiguous_dollars{batch="interviews"} 0.0014`,
		`recall_spent_dollars{batch="interviews"} 0.0014`,
		`recall_provider_spent_dollars{batch="interviews",play="false",provider="openai"} 0.0014`,
		`recall_provider_latency_seconds_count{outcome="applied"} 2`,
		`recall_provider_latency_seconds_count{outcome="ambiguous"} 2`,
		`recall_ambiguous_open 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "recall_budget_dollars") {
		t.Error("a budget is reported for a batch without one")
	}
	x.settle(t, x.refused, "not_applied", "not charged", "", nil)
	x.post(t, "/batches/"+batch+"/retry-failed", "same-origin", url.Values{})
	x.run(t)
	body = x.get(t, "/metrics").body
	for _, want := range []string{
		`recall_provider_latency_seconds_count{outcome="applied"} 3`,
		`recall_provider_latency_seconds_count{outcome="ambiguous"} 2`,
		`recall_items{batch="interviews",state="done"} 3`,
		`recall_console_retries_total 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics after a second run lacks %s", want)
		}
	}

	// The sandbox's play money is apart: spent stays what openai cost.
	spent := regexp.MustCompile(`recall_spent_dollars\{batch="interviews"\} (\S+)`).FindStringSubmatch(body)
	p, err := provider.New(provider.Options{Name: "sandbox", BaseURL: x.provider, Model: "whisper-1", Timeout: 10 * time.Second})
	if err != nil || spent == nil {
		t.Fatal(err, spent)
	}
	_, cache := recordings(t)
	if _, err := x.a.Run(context.Background(), batch, recall.RunOptions{Provider: p, PricePerMinute: 6000, Workers: 2, CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	body = x.get(t, "/metrics").body
	if !strings.Contains(body, spent[0]) || !regexp.MustCompile(`recall_provider_spent_dollars\{batch="interviews",play="true",provider="sandbox"\} 0\.00`).MatchString(body) {
		t.Errorf("/metrics after a sandbox run: want %s and the sandbox's play money apart:\n%s", spent[0], body)
	}
}

// TestSearchQueries: the command line's syntax (OR, prefix*), punctuation
// otherwise no syntax; a query it cannot read is its words; an empty
// query shows the form only.
func TestSearchQueries(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	for q, want := range map[string]string{
		"segment":            `2 matches`,
		`"`:                  `No transcript holds &#34;.`,
		`segment OR NEAR(x`:  `2 matches`,
		`harbour OR NEAR(x`:  `No transcript holds harbour OR NEAR(x.`,
		"":                   `name="q" value=""`,
		"[sandbox] segment*": `2 matches`,
	} {
		p := x.get(t, "/search?sandbox=1&q="+url.QueryEscape(q))
		if p.status != 200 || !strings.Contains(p.body, want) {
			t.Errorf("search %q: %d, no %q\n%s", q, p.status, want, p.body)
		}
	}
	// The fixture's transcripts are openai's (from the sandbox's server),
	// found without asking for the sandbox's placeholders.
	if p := x.get(t, "/search?q=segment"); p.status != 200 || !strings.Contains(p.body, "2 matches") || strings.Contains(p.body, "sandbox/whisper-1") {
		t.Errorf("search without the sandbox's placeholders: %d\n%s", p.status, p.body)
	}
}

// TestRecordingPage: each part of a recording with the state of the
// request that paid for it, its transcript's lines at their times; an
// ambiguous part links to its settling.
func TestRecordingPage(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	sha := strings.Split(x.charged, "/")[1]
	p := x.get(t, "/recordings/"+sha)
	if p.status != 200 || !strings.Contains(p.body, `<span class="state-ambiguous">ambiguous</span>`) || !strings.Contains(p.body, "settle it</a>, with the transcript") {
		t.Errorf("an ambiguous recording's page: %d\n%s", p.status, p.body)
	}
	var done string
	for _, op := range must(x.a.Operations(context.Background(), batch)) {
		if op.State == journal.Applied {
			done = strings.Split(op.Key, "/")[1]
		}
	}
	p = x.get(t, "/recordings/"+done)
	if !strings.Contains(p.body, `<tr id="t0"><td class="when"><a href="#t0">0:00:00</a></td><td>[sandbox] segment 1`) ||
		!strings.Contains(p.body, `<dt>Language</dt><dd>en, detected by the provider</dd>`) {
		t.Errorf("a transcribed recording's page, with the language the sandbox detects:\n%s", p.body)
	}
	if p := x.get(t, "/recordings/abc"); p.status != 404 {
		t.Errorf("a recording that does not exist: %d", p.status)
	}

	// Settled with a transcript that labels its speakers (OpenAI's
	// diarized_json), the page names who speaks where a turn starts.
	tr, err := recall.ParseTranscript([]byte(`{"task":"transcribe","duration":2,"text":"Hello. Hi. Bye.","segments":[
		{"type":"transcript.text.segment","id":"a","start":0,"end":0.5,"text":"Hello.","speaker":"A"},
		{"type":"transcript.text.segment","id":"b","start":0.6,"end":1.0,"text":"Hi.","speaker":"B"},
		{"type":"transcript.text.segment","id":"c","start":1.1,"end":1.5,"text":"Bye.","speaker":"B"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.a.Resolve(context.Background(), x.charged, recall.Decision{Applied: true, Transcript: tr, By: "ana", Note: "charged"}); err != nil {
		t.Fatal(err)
	}
	p = x.get(t, "/recordings/"+sha)
	for _, want := range []string{`<b class="speaker">Speaker A:</b> Hello.`, `<b class="speaker">Speaker B:</b> Hi.`, `</td><td>Bye.</td>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the page of a transcript with speakers lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, "<dt>Language</dt>") {
		t.Errorf("a transcript that names no language is given one:\n%s", p.body)
	}

	// Named afterwards, the speakers are shown by name, on the page and
	// in a search's matches, escaped as any text.
	if err := x.a.Store().NameSpeakers(context.Background(), sha, map[string]string{"A": "Ana <host>"}); err != nil {
		t.Fatal(err)
	}
	p = x.get(t, "/recordings/"+sha)
	if !strings.Contains(p.body, `<b class="speaker">Ana &lt;host&gt;:</b> Hello.`) || !strings.Contains(p.body, `<b class="speaker">Speaker B:</b> Hi.`) {
		t.Errorf("the page of a transcript with a speaker named:\n%s", p.body)
	}
	if p := x.get(t, "/search?q=hello"); !strings.Contains(p.body, `<td class="snippet"><b class="speaker">Ana &lt;host&gt;:</b> <mark>Hello</mark>`) {
		t.Errorf("a search's match of a named speaker:\n%s", p.body)
	}
	// Kept to one speaker, by name, label or label as shown, as
	// recall-archive search --speaker does.
	for _, speaker := range []string{"ana+%3Chost%3E", "A", "speaker+a"} {
		if p := x.get(t, "/search?q=hello&speaker="+speaker); !strings.Contains(p.body, `<b class="speaker">Ana &lt;host&gt;:</b> <mark>Hello</mark>`) {
			t.Errorf("a search kept to speaker %s:\n%s", speaker, p.body)
		}
	}
	if p := x.get(t, "/search?q=hello&speaker=B"); strings.Contains(p.body, "<mark>Hello</mark>") || !strings.Contains(p.body, "No transcript holds hello said by B.") {
		t.Errorf("a search kept to a speaker who did not say it:\n%s", p.body)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

// TestTokenRequired: with a token, a page asks for signing in, a form
// without a session is refused, and a program reads /metrics with the
// token as a bearer.
func TestTokenRequired(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-recall"
	x := newArchive(t, archiveOptions{token: token})
	if p := x.get(t, "/batches/"+batch); p.status != 303 || p.location != "/login?next=%2Fbatches%2Finterviews" {
		t.Errorf("a page without signing in: %d %s", p.status, p.location)
	}
	if p := x.post(t, "/batches/"+batch+"/retry-failed", "same-origin", url.Values{}); p.status != 401 {
		t.Errorf("the retry button without signing in: %d", p.status)
	}
	if p := x.get(t, "/metrics"); p.status != 401 {
		t.Errorf("/metrics without the token: %d", p.status)
	}
	req, _ := http.NewRequest("GET", x.console.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if p := x.do(t, req); p.status != 200 || !strings.Contains(p.body, `recall_items{batch="interviews",state="ambiguous"} 2`) {
		t.Errorf("/metrics with the token: %d", p.status)
	}
}

// TestBatchShowsWhatIsDoneNow: the batch's page shows what runs and adds
// recorded that they are doing with it, a conversion with its share of
// the audio converted and an add with its counts and rate; the list marks
// the batch at work. Rows not updated for a while, those a killed run
// left, are not shown; without fresh rows, the section is not there.
func TestBatchShowsWhatIsDoneNow(t *testing.T) {
	t.Parallel()
	x := newArchive(t, archiveOptions{})
	ctx := context.Background()
	s := x.a.Store()
	if p := x.get(t, "/batches/"+batch); strings.Contains(p.body, `id="now"`) || p.refresh != "" {
		t.Fatalf("a batch no one works on shows what is done now, or is read again (Refresh %q):\n%s", p.refresh, section(t, p.body, "now"))
	}
	put := func(worker string, rows ...store.Activity) {
		t.Helper()
		if err := s.RecordActivity(ctx, worker, store.ActivityChange{Put: rows}); err != nil {
			t.Fatal(err)
		}
	}
	put("killed/run-1", store.Activity{Batch: batch, Subject: "dead0dead0dead0", Path: "/rec/killed.mp3", Stage: "sending", Chunk: 1, Chunks: 2})
	x.later.Add(int64(recall.ActivityFresh + time.Second))
	put("live/add-1", store.Activity{Batch: batch, Path: "/rec", Stage: recall.StageAdding, Total: 120, Bytes: 0})
	put("live/run-1",
		store.Activity{Batch: batch, Subject: "aaaa1111bbbb2222", Path: "/rec/long interview.mp3", Stage: string(recall.StageConverting), Done: 2_520_000, Total: 6_000_000},
		store.Activity{Batch: batch, Subject: "cccc3333dddd4444", Path: "/rec/short.mp3", Stage: string(recall.StageWaiting), Chunk: 2, Chunks: 3})
	x.later.Add(int64(2 * time.Second))
	put("live/add-1", store.Activity{Batch: batch, Path: "/rec", Stage: recall.StageAdding, Done: 40, Total: 120, Bytes: 170_000_000})

	p := x.get(t, "/batches/"+batch)
	if p.refresh != "10" {
		t.Errorf("a batch at work is not read again every 10 s: Refresh %q", p.refresh)
	}
	table := section(t, p.body, "activity")
	for _, want := range []string{`<progress max="100" value="42">42%</progress> converting 42%`, "/rec/long interview.mp3", "aaaa1111bbbb",
		"waiting for the answer to chunk 2 of 3", "/rec/short.mp3"} {
		if !strings.Contains(table, want) {
			t.Errorf("what is done now lacks %q:\n%s", want, table)
		}
	}
	// 170 MB in the 2 s of the clock, and what the test took (a busy
	// machine may take seconds).
	if !regexp.MustCompile(`adding: 40 of 120 files hashed, 170.0 MB at (8[0-5]|[4-7]\d)\.\d MB/s`).MatchString(table) {
		t.Errorf("what is done now lacks the add's counts and rate:\n%s", table)
	}
	// The add has been at work for the 2 s of the clock, and what the
	// test took.
	if !regexp.MustCompile(`MB/s</td>\s*<td class="when" title="since [^"]+">[2-4]s</td>`).MatchString(table) {
		t.Errorf("what is done now lacks how long the add has been at work:\n%s", table)
	}
	if strings.Contains(table, "killed.mp3") {
		t.Errorf("a stale row is shown:\n%s", table)
	}
	if i, j := strings.Index(p.body, `id="now"`), strings.Index(p.body, `id="progress"`); i > j {
		t.Error("what is done now comes after the progress")
	}
	row := section(t, x.get(t, "/batches").body, "batch-"+batch)
	if !strings.Contains(row, `<strong class="working">adding files; working on 2 recordings</strong>`) {
		t.Errorf("the list does not mark the batch at work:\n%s", row)
	}

	for _, w := range []string{"live/add-1", "live/run-1"} {
		if err := s.EndActivity(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if p := x.get(t, "/batches/"+batch); strings.Contains(p.body, `id="now"`) || p.refresh != "" {
		t.Errorf("what is done now after every run and add ended (Refresh %q):\n%s", p.refresh, section(t, p.body, "now"))
	}
	if row := section(t, x.get(t, "/batches").body, "batch-"+batch); strings.Contains(row, "working") {
		t.Errorf("the list marks the batch at work after the work ended:\n%s", row)
	}
}
