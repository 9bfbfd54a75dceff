package consoleui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// Pages returns the pages recall-archive adds to the console.
func (u *UI) Pages() []console.Page {
	return []console.Page{
		{Title: "Batches", Path: "/batches", Handlers: map[string]http.Handler{
			"GET /batches":                      http.HandlerFunc(u.batches),
			"GET /batches/{name}":               http.HandlerFunc(u.batch),
			"POST /batches/{name}/retry-failed": http.HandlerFunc(u.retryFailed),
			"GET /recordings/{sha}":             http.HandlerFunc(u.recording),
		}},
		{Title: "Search", Path: "/search", Handlers: map[string]http.Handler{
			"GET /search": http.HandlerFunc(u.search),
		}},
	}
}

// refreshEvery is how often a batch's page is read again while runs or
// adds work on it.
const refreshEvery = 10 * time.Second

// stateInfo is how the pages name a recording's progress.
type stateInfo struct {
	State recording.Progress
	// Label names it; Means says what it means and what to do.
	Label, Means string
}

// states are the states of a recording's transcription, in the order the
// pages show them. A state the store reports that is not here is shown
// under its own name.
var states = []stateInfo{
	{recording.Done, "done", "every part transcribed"},
	{recording.Waiting, "waiting", "not sent yet: the next run sends it"},
	{recording.Sending, "sending", "a request in flight"},
	{recording.FailedSafely, "failed safely", "failed before it was paid for, or refused by the provider: retry-failed --safe-only queues it again"},
	{recording.RefusedByBudget, "refused by budget", "never sent: the batch's budget could not pay for it; raise the budget and run again"},
	{recording.Ambiguous, "ambiguous", "may have been charged without an answer: a person settles it"},
	{recording.Untranscribed, "paid, no transcript", "charged, as the provider said, which kept no transcript to fetch"},
}

// tally is how many of a batch's recordings are in one state.
type tally struct {
	stateInfo
	Count int
}

// segment is a part of a bar: a class that colours it, what it is, and
// where it starts and how wide it is, in percent.
type segment struct {
	Class, Title string
	X, Width     float64
}

// bar lays out segments of the given amounts, out of total.
func bar(total float64, parts ...segment) []segment {
	x := 0.0
	var out []segment
	for _, p := range parts {
		if p.Width <= 0 || total <= 0 {
			continue
		}
		p.X, p.Width = x, 100*p.Width/total
		x += p.Width
		out = append(out, p)
	}
	return out
}

// progressBar is the bar of a batch's progress.
func progressBar(ts []tally) []segment {
	var parts []segment
	total := 0
	for _, t := range ts {
		parts = append(parts, segment{Class: "st-" + string(t.State), Title: fmt.Sprintf("%d %s", t.Count, t.Label), Width: float64(t.Count)})
		total += t.Count
	}
	return bar(float64(total), parts...)
}

// tallies counts progress by state, known states first, each with its
// part of a bar.
func tallies(progress map[string]recording.Progress) []tally {
	counts := map[recording.Progress]int{}
	for _, p := range progress {
		counts[p]++
	}
	var out []tally
	for _, s := range states {
		out = append(out, tally{stateInfo: s, Count: counts[s.State]})
		delete(counts, s.State)
	}
	var other []recording.Progress
	for p := range counts {
		other = append(other, p)
	}
	slices.Sort(other)
	for _, p := range other {
		out = append(out, tally{stateInfo: stateInfo{State: p, Label: string(p)}, Count: counts[p]})
	}
	return out
}

// summary is a batch as the list of batches shows it.
type summary struct {
	store.Batch
	Status   recall.Status
	Tallies  []tally
	Bar      []segment
	Estimate recall.Estimate
	// Working says that runs or adds are at work on the batch now.
	Working string
}

// summarize reads a batch's status, progress and estimate.
func (u *UI) summarize(ctx context.Context, b store.Batch) (summary, map[string]recording.Progress, error) {
	s := summary{Batch: b}
	var err error
	if s.Status, err = u.a.Status(ctx, b.Name); err != nil {
		return s, nil, err
	}
	progress, err := u.s.Progress(ctx, b.Name)
	if err != nil {
		return s, nil, err
	}
	s.Tallies = tallies(progress)
	s.Bar = progressBar(s.Tallies)
	s.Estimate, err = u.a.Estimate(ctx, b.Name, u.opts.Pricing)
	return s, progress, err
}

// batchesData is what the list of batches shows.
type batchesData struct {
	Batches []summary
	Priced  string
}

// batches lists the archive's batches, each with its progress and money.
func (u *UI) batches(w http.ResponseWriter, r *http.Request) {
	bs, err := u.s.Batches(r.Context())
	if err != nil {
		u.fail(w, r, err)
		return
	}
	act, err := u.a.Activity(r.Context(), "")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	marks := working(act)
	d := batchesData{Priced: u.opts.Pricing.Provider + "/" + u.opts.Pricing.Model}
	for _, b := range bs {
		s, _, err := u.summarize(r.Context(), b)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		s.Working = marks[b.Name]
		d.Batches = append(d.Batches, s)
	}
	console.Render(w, r, http.StatusOK, "Batches", u.tmpl, "batches", d)
}

// recordingRow is one of a batch's recordings.
type recordingRow struct {
	store.Content
	Paths []string
	State stateInfo
}

// batchData is what a batch's page shows.
type batchData struct {
	summary
	Priced    string
	Price     ledger.Amount
	Money     recall.Money
	Left      ledger.Amount // of the budget
	Over      bool          // spent and held pass the budget
	MoneyBar  []segment
	Ambiguous []store.Request
	Filter    string
	Rows      []recordingRow
	Cut       int // recordings not shown
	Retried   *retried
	// Now is what runs and adds are doing with the batch now.
	Now []doing
}

// retried is what retry-failed --safe-only did, as its redirect says.
type retried struct{ Files, Requests, Left int }

// maxRows bounds the recordings a batch's page lists.
const maxRows = 500

// batch shows one batch: what runs and adds are doing with it now,
// progress per state, money, the ambiguous requests, the retry button,
// the files that failed and the recordings.
func (u *UI) batch(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("name")
	bs, err := u.s.Batches(ctx)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(bs, func(b store.Batch) bool { return b.Name == name })
	if i < 0 {
		console.Fail(w, r, http.StatusNotFound, fmt.Sprintf("The archive has no batch named %q.", name))
		return
	}
	s, progress, err := u.summarize(ctx, bs[i])
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d := batchData{summary: s, Priced: u.opts.Pricing.Provider + "/" + u.opts.Pricing.Model, Price: u.opts.Pricing.PerMinute, Money: s.Status.Money, Filter: r.URL.Query().Get("state"),
		Retried: retriedFrom(r.URL.Query())}
	d.Left, d.Over, d.MoneyBar = budget(d.Money)
	if d.Ambiguous, err = u.s.Ambiguous(ctx, name); err != nil {
		u.fail(w, r, err)
		return
	}
	if d.Rows, d.Cut, err = u.rows(ctx, name, progress, d.Filter); err != nil {
		u.fail(w, r, err)
		return
	}
	act, err := u.a.Activity(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d.Now = now(act)
	if len(d.Now) > 0 {
		// The pages run no script: while work goes on, the browser reads
		// the page again by itself.
		w.Header().Set("Refresh", strconv.Itoa(int(refreshEvery/time.Second)))
	}
	console.Render(w, r, http.StatusOK, "Batch "+name, u.tmpl, "batch", d)
}

// budget says what is left of the budget, whether spent and held pass it,
// and the bar that shows them: spent, held by ambiguous requests, held by
// the others, and what is left, out of the budget (or out of what was
// spent and held, without one).
func budget(m recall.Money) (left ledger.Amount, over bool, b []segment) {
	total := m.Budget
	used := m.Spent + m.Held
	if total == 0 || used > total {
		total, over = used, m.Budget > 0
	} else {
		left = total - used
	}
	b = bar(float64(total),
		segment{Class: "money-spent", Title: "spent " + dollars(m.Spent), Width: float64(m.Spent)},
		segment{Class: "money-ambiguous", Title: "held by ambiguous requests " + dollars(m.HeldAmbiguous), Width: float64(m.HeldAmbiguous)},
		segment{Class: "money-held", Title: "held by requests in flight " + dollars(m.Held-m.HeldAmbiguous), Width: float64(m.Held - m.HeldAmbiguous)},
		segment{Class: "money-left", Title: "left of the budget " + dollars(left), Width: float64(left)})
	return left, over, b
}

// rows lists the batch's recordings in the state filter (every one when
// empty), at most maxRows, and how many more there are.
func (u *UI) rows(ctx context.Context, batch string, progress map[string]recording.Progress, filter string) ([]recordingRow, int, error) {
	contents, err := u.s.Contents(ctx, batch)
	if err != nil {
		return nil, 0, err
	}
	files, err := u.s.Files(ctx, batch, recording.Added)
	if err != nil {
		return nil, 0, err
	}
	paths := map[string][]string{}
	for _, f := range files {
		paths[f.SHA256] = append(paths[f.SHA256], f.Display())
	}
	var out []recordingRow
	cut := 0
	for _, c := range contents {
		p := progress[c.SHA256]
		if filter != "" && string(p) != filter {
			continue
		}
		if len(out) == maxRows {
			cut++
			continue
		}
		out = append(out, recordingRow{Content: c, Paths: paths[c.SHA256], State: info(p)})
	}
	return out, cut, nil
}

// info returns how the pages name the state p.
func info(p recording.Progress) stateInfo {
	for _, s := range states {
		if s.State == p {
			return s
		}
	}
	return stateInfo{State: p, Label: string(p)}
}

// retriedFrom reads what retry-failed did from the page's address.
func retriedFrom(q url.Values) *retried {
	if q.Get("retried") == "" {
		return nil
	}
	n := func(k string) int { v, _ := strconv.Atoi(q.Get(k)); return max(v, 0) }
	return &retried{Files: n("files"), Requests: n("requests"), Left: n("left")}
}

// retryFailed queues again what is proven unpaid, as retry-failed
// --safe-only does, and sends the person back to the batch's page.
func (u *UI) retryFailed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
	defer cancel()
	rep, err := u.a.RetryFailed(ctx, name)
	if errors.Is(err, recall.ErrNoBatch) {
		console.Fail(w, r, http.StatusNotFound, fmt.Sprintf("The archive has no batch named %q.", name))
		return
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.retry.Inc()
	u.log.Info("retry-failed --safe-only", "batch", name, "files", rep.Items, "requests", rep.Requests, "left", len(rep.Left), "by", console.Who(r))
	q := url.Values{"retried": {"1"}, "files": {strconv.Itoa(rep.Items)}, "requests": {strconv.Itoa(rep.Requests)}, "left": {strconv.Itoa(len(rep.Left))}}
	http.Redirect(w, r, batchPath(name)+"?"+q.Encode()+"#retry", http.StatusSeeOther)
}

// fail reports an error of the archive's.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	u.log.Error("request failed", "path", r.URL.Path, "err", err)
	console.Fail(w, r, http.StatusInternalServerError, "The archive could not be read: "+err.Error())
}
