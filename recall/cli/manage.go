package cli

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
)

func runRetryFailed(ctx context.Context, cl *cmdline) int {
	safeOnly := cl.fs.Bool("safe-only", false, "required: retry only failures known to be before payment")
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	if !*safeOnly {
		return cl.usageError("say --safe-only: only failures known to be before payment are ever retried; ambiguous requests are resolved with 'recall-archive resolve'")
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	rep, err := a.RetryFailed(ctx, cl.args[0])
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(rep)
		return ExitOK
	}
	w := cl.env.Stdout
	fmt.Fprintf(w, "batch %s: %d files and %d requests queued again; run the batch to send them\n", rep.Batch, rep.Items, rep.Requests)
	if len(rep.Left) > 0 {
		fmt.Fprintf(w, "left alone (%d):\n", len(rep.Left))
		for _, l := range rep.Left {
			fmt.Fprintf(w, "  %s (%s): %s\n", l.Key, l.State, l.Why)
		}
	}
	return ExitOK
}

func runAmbiguous(ctx context.Context, cl *cmdline) int {
	if code, ok := cl.parse(0, 1); !ok {
		return code
	}
	batch := ""
	if len(cl.args) == 1 {
		batch = cl.args[0]
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	items, err := a.Ambiguous(ctx, batch)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(items)
		return ExitOK
	}
	w := cl.env.Stdout
	if len(items) == 0 {
		fmt.Fprintln(w, "no ambiguous requests")
		return ExitOK
	}
	for _, it := range items {
		fmt.Fprintf(w, "%s\n", it.Key)
		for _, p := range it.Paths {
			fmt.Fprintf(w, "  file:      %q\n", p)
		}
		fmt.Fprintf(w, "  sent at:   %s (attempt %d)\n", it.SentAt.Local().Format(time.RFC3339), it.Attempt)
		fmt.Fprintf(w, "  what:      %s\n", it.Detail)
		if v, ok := it.Evidence["bytes_written"]; ok {
			fmt.Fprintf(w, "  written:   %v bytes\n", v)
		}
		if v, ok := it.Evidence["provider_request_id"]; ok {
			fmt.Fprintf(w, "  request:   %v\n", v)
		}
		fmt.Fprintf(w, "  held:      $%s\n", it.Held.Decimal(6))
	}
	fmt.Fprint(w, `
How to check: look at the provider's usage or billing page around the time
each request was sent. If it was charged, 'recall-archive resolve KEY --applied
--note "..."' (add --transcript FILE if you have the text); if it was not,
'recall-archive resolve KEY --not-applied --note "..."', then retry-failed.
The sandbox provider can be asked: GET /v1/sandbox/charges?tag=KEY.
`)
	return ExitAmbiguous
}

func runResolve(ctx context.Context, cl *cmdline) int {
	applied := cl.fs.Bool("applied", false, "the provider did transcribe, and charge")
	notApplied := cl.fs.Bool("not-applied", false, "the provider did not; the request may be sent again")
	transcript := cl.fs.String("transcript", "", "with --applied: a file with the transcript (plain text, or the provider's JSON)")
	note := cl.fs.String("note", "", "why: what you checked")
	by := cl.fs.String("by", "", "who decides (default: the current user)")
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	if *applied == *notApplied {
		return cl.usageError("say either --applied or --not-applied")
	}
	if *notApplied && strings.TrimSpace(*note) == "" {
		return cl.usageError("--not-applied needs --note: say what you checked")
	}
	if *transcript != "" && !*applied {
		return cl.usageError("--transcript goes with --applied")
	}
	d := recall.Decision{Applied: *applied, Note: *note, By: *by}
	if d.By == "" {
		d.By = currentUser(cl)
	}
	if d.Note == "" {
		d.Note = "confirmed applied"
	}
	if *transcript != "" {
		data, err := os.ReadFile(*transcript)
		if err != nil {
			return cl.fail(err)
		}
		// The provider's JSON keeps the timestamps; plain text has none.
		t, err := provider.ParseVerboseJSON(data)
		if err != nil || t.Text == "" {
			t = provider.Transcript{Text: strings.TrimSpace(string(data))}
			t.Segments = []provider.Segment{{Text: t.Text}}
		}
		d.Transcript = &t
		d.Evidence = journal.Evidence{"transcript_file": *transcript}
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	op, err := a.Resolve(ctx, cl.args[0], d)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(op)
		return ExitOK
	}
	fmt.Fprintf(cl.env.Stdout, "%s resolved as %s by %s\n", op.Key, op.State, op.Resolution.By)
	return ExitOK
}

func runExport(ctx context.Context, cl *cmdline) int {
	format := cl.fs.String("format", "txt,srt,vtt,json", "formats, comma-separated: txt, srt, vtt, json")
	out := cl.fs.String("out", "", "the directory to write to (required)")
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	if *out == "" {
		return cl.usageError("--out is required")
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	n, err := a.Export(ctx, cl.args[0], *out, strings.Split(*format, ","))
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(map[string]any{"batch": cl.args[0], "recordings": n, "out": *out})
		return ExitOK
	}
	fmt.Fprintf(cl.env.Stdout, "wrote the transcripts of %d recordings to %s\n", n, *out)
	return ExitOK
}

func currentUser(cl *cmdline) string {
	if u := cl.env.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}

func runReconcile(ctx context.Context, cl *cmdline) int {
	var pf providerFlags
	pf.register(cl)
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	if pf.name == "sandbox" && pf.url == "" {
		return cl.usageError("give --provider-url: the sandbox to ask is the one that was called")
	}
	prov, stop, err := pf.build(cl, time.Minute)
	if err != nil {
		return cl.fail(err)
	}
	defer stop()
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	res, err := a.Reconcile(ctx, cl.args[0], prov)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(res)
	} else {
		w := cl.env.Stdout
		if len(res) == 0 {
			fmt.Fprintln(w, "no ambiguous requests")
		}
		for _, r := range res {
			switch {
			case r.Error != "":
				fmt.Fprintf(w, "%s: could not ask: %s\n", r.Key, r.Error)
			case r.State == journal.Applied:
				fmt.Fprintf(w, "%s: charged (request %s): resolved as applied\n", r.Key, r.Request)
			default:
				fmt.Fprintf(w, "%s: no such charge: resolved as not applied; retry-failed --safe-only will send it again\n", r.Key)
			}
		}
	}
	for _, r := range res {
		if r.Error != "" {
			return ExitAmbiguous
		}
	}
	return ExitOK
}

func runSearch(ctx context.Context, cl *cmdline) int {
	limit := cl.fs.Int("limit", 20, "show at most this many matches")
	if code, ok := cl.parse(1, -1); !ok {
		return code
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	hits, err := a.Search(ctx, strings.Join(cl.args, " "), *limit)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(hits)
		return ExitOK
	}
	w := cl.env.Stdout
	if len(hits) == 0 {
		fmt.Fprintln(w, "no matches")
	}
	for _, h := range hits {
		path := h.SHA256[:12]
		if len(h.Paths) > 0 {
			path = h.Paths[0]
		}
		fmt.Fprintf(w, "%s  at %s\n    %s\n", path, clock(h.Start), h.Snippet)
	}
	return ExitOK
}

// clock formats an offset as H:MM:SS.
func clock(d time.Duration) string {
	s := int(d.Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
