// Package consoleui is recall-archive's part of the console: each batch
// with what runs and adds are doing with it now, its progress per state,
// its money estimated, held and spent against its budget, its ambiguous
// requests and retry-failed --safe-only as a button; search over every
// transcript with the time of each match; a recording's transcript; how
// the console settles an ambiguous request, through recall's own
// resolution (a transcript file attached to one that was applied); and
// the archive's metrics.
package consoleui

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Options configure recall-archive's pages.
type Options struct {
	// Archive is the open archive the pages show and change.
	Archive *recall.Archive
	// Pricing prices the estimates: a provider's model, its price and
	// rounding.
	Pricing recall.Pricing
	// Registry, if not nil, receives the archive's metrics.
	Registry prometheus.Registerer
	// Log receives a structured line for each change made; nil discards
	// them.
	Log *slog.Logger
}

// UI is recall-archive's pages.
type UI struct {
	opts  Options
	a     *recall.Archive
	s     *store.Store
	tmpl  *template.Template
	log   *slog.Logger
	retry prometheus.Counter
}

// New returns recall-archive's pages over opts.Archive.
func New(opts Options) (*UI, error) {
	if opts.Archive == nil {
		return nil, fmt.Errorf("consoleui: Options.Archive is the archive to show")
	}
	tmpl, err := template.New("recall").Funcs(console.Funcs()).Funcs(templateFuncs()).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	u := &UI{opts: opts, a: opts.Archive, s: opts.Archive.Store(), tmpl: tmpl, log: opts.Log}
	if u.log == nil {
		u.log = slog.New(slog.DiscardHandler)
	}
	u.retry = prometheus.NewCounter(prometheus.CounterOpts{Name: "recall_console_retries_total",
		Help: "Times retry-failed --safe-only was asked for through the console."})
	if opts.Registry != nil {
		for _, c := range []prometheus.Collector{u.retry, newArchiveCollector(u.s), newLatencyCollector(u.s.Journal())} {
			if err := opts.Registry.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

// Journal returns the journal of the archive's paid requests, for the
// console's pages of ambiguous requests and its audit log.
func (u *UI) Journal() *journal.Journal { return u.s.Journal() }

// templateFuncs are the functions recall's templates use beside the
// console's.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"dollars":   dollars,
		"clock":     clock,
		"batchPath": batchPath,
		"marked":    marked,
		"short":     short,
		"inc":       func(i int) int { return i + 1 },
		"plus":      func(a, b time.Duration) time.Duration { return a + b },
		"seconds":   func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) },
	}
}

// dollars writes an amount of micro-dollars as dollars.
func dollars(a ledger.Amount) string { return "$" + a.Decimal(6) }

// clock writes an offset from the start of a recording as H:MM:SS.
func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// batchPath is the address of a batch's page.
func batchPath(name string) string { return "/batches/" + url.PathEscape(name) }

// short names a content by the start of its hash.
func short(sha string) string { return sha[:min(12, len(sha))] }

// The marks around a search's matches: characters of Unicode's private
// use area, which no transcript holds.
const markOpen, markClose = "\ue000", "\ue001"

// part is a piece of a snippet, marked when it matches.
type part struct {
	Text string
	Mark bool
}

// marked cuts a snippet at its marks.
func marked(snippet string) []part {
	var out []part
	for snippet != "" {
		before, rest, found := strings.Cut(snippet, markOpen)
		if before != "" {
			out = append(out, part{Text: before})
		}
		if !found {
			break
		}
		match, after, _ := strings.Cut(rest, markClose)
		out = append(out, part{Text: match, Mark: true})
		snippet = after
	}
	return out
}

// describe says in a line which recording and which part of it a request
// pays for: the files that hold it, and the chunk.
func (u *UI) describe(op journal.Operation) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sha, idx, _ := strings.Cut(op.Subject, "/")
	paths, err := u.s.Paths(ctx, "", sha)
	if err != nil || len(paths) == 0 {
		return "recording " + short(sha) + ", chunk " + idx
	}
	what := filepath.Base(paths[0])
	if len(paths) > 1 {
		what += fmt.Sprintf(" (and %d other file%s with the same recording)", len(paths)-1, map[bool]string{true: "s"}[len(paths) > 2])
	}
	if chunks, err := u.s.Chunks(ctx, sha, recording.Transcriber{}); err == nil && len(chunks) > 1 {
		for _, c := range chunks {
			if c.Key == op.Key {
				what += fmt.Sprintf(", part %d of %d (%s to %s)", c.Index+1, c.Count, clock(c.Start), clock(c.Start+c.Duration))
			}
		}
	}
	return what
}
