package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/sandbox"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// providerFlags are the flags that choose a provider.
type providerFlags struct {
	name, url, model, keyEnv, prices, project string
	getenv                                    func(string) string
}

func (p *providerFlags) register(cl *cmdline) {
	cl.fs.StringVar(&p.name, "provider", "sandbox", "provider: sandbox (built in, no account needed), openai (any OpenAI-compatible API), deepgram or assemblyai")
	cl.fs.StringVar(&p.url, "provider-url", "", "the provider's base URL (default: the provider's own; for sandbox, a sandbox started for the run)")
	cl.fs.StringVar(&p.model, "model", "", "the model (default: whisper-1; nova-3 for deepgram; best for assemblyai)")
	cl.fs.StringVar(&p.keyEnv, "api-key-env", "", "the environment variable that holds the API key (default: OPENAI_API_KEY, DEEPGRAM_API_KEY or ASSEMBLYAI_API_KEY); keys are never taken from flags")
	cl.fs.StringVar(&p.project, "deepgram-project", "", "deepgram: the project whose request log reconcile searches (default: $DEEPGRAM_PROJECT_ID)")
	cl.fs.StringVar(&p.prices, "prices", "", `a JSON file of prices over the defaults: {"provider/model": "dollars per minute"} (default: prices.json in the config directory, if there)`)
	p.getenv = cl.env.Getenv
}

// defaults fills what the provider decides: model, key variable, URL.
func (p *providerFlags) defaults() {
	type def struct{ model, keyEnv, url string }
	d := map[string]def{
		"sandbox":    {"whisper-1", "", ""},
		"openai":     {"whisper-1", "OPENAI_API_KEY", "https://api.openai.com"},
		"deepgram":   {"nova-3", "DEEPGRAM_API_KEY", "https://api.deepgram.com"},
		"assemblyai": {"best", "ASSEMBLYAI_API_KEY", "https://api.assemblyai.com"},
	}[p.name]
	if p.model == "" {
		p.model = d.model
	}
	if p.keyEnv == "" {
		p.keyEnv = d.keyEnv
	}
	if p.url == "" && p.name != "sandbox" {
		p.url = d.url
	}
	if p.project == "" && p.getenv != nil {
		p.project = p.getenv("DEEPGRAM_PROJECT_ID")
	}
}

// price returns the model's price per minute, from the prices file if
// there is one.
func (p *providerFlags) price() (ledger.Amount, error) {
	p.defaults()
	path := p.prices
	if path == "" {
		if dir := configDir(p.getenv); dir != "" {
			if _, err := os.Stat(filepath.Join(dir, "prices.json")); err == nil {
				path = filepath.Join(dir, "prices.json")
			}
		}
	}
	prices := recall.DefaultPrices()
	if path != "" {
		var err error
		if prices, err = recall.LoadPrices(path); err != nil {
			return 0, err
		}
	}
	return prices.PerMinute(p.name, p.model)
}

// configDir is recall-archive's directory in the user's configuration
// directory ($XDG_CONFIG_HOME, else ~/.config), or "" if there is none.
func configDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "recall-archive")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "recall-archive")
	}
	return ""
}

// build returns the provider, starting a sandbox when it is asked for
// without a URL; stop shuts that sandbox down.
func (p *providerFlags) build(cl *cmdline, timeout time.Duration) (prov provider.Provider, stop func(), err error) {
	stop = func() {}
	p.defaults()
	cfg := retry.DefaultConfig()
	cfg.Deadline = timeout
	client, err := transport.NewClient(transport.Options{Policy: retry.MustNew(cfg)})
	if err != nil {
		return nil, stop, err
	}
	switch p.name {
	case "sandbox":
		url := p.url
		if url == "" {
			sb := sandbox.New(sandbox.Options{})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, stop, err
			}
			srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			url = "http://" + ln.Addr().String()
			stop = func() {
				sb.Close()
				srv.Close()
			}
			if !cl.json {
				fmt.Fprintf(cl.env.Stderr, "using the built-in sandbox provider at %s: placeholder transcripts, nothing is really charged\n", url)
			}
		}
		return &provider.Sandbox{OpenAI: provider.OpenAI{BaseURL: url, ModelName: p.model, Client: client, TagHeader: "X-Recall-Key"}}, stop, nil
	case "openai", "deepgram", "assemblyai":
		key := cl.env.Getenv(p.keyEnv)
		if key == "" {
			return nil, stop, fmt.Errorf("the API key is missing: set $%s (or name another variable with --api-key-env)", p.keyEnv)
		}
		switch p.name {
		case "openai":
			return &provider.OpenAI{BaseURL: p.url, ModelName: p.model, APIKey: key, Client: client}, stop, nil
		case "deepgram":
			return &provider.Deepgram{BaseURL: p.url, ModelName: p.model, APIKey: key, ProjectID: p.project, Client: client}, stop, nil
		default:
			return &provider.AssemblyAI{BaseURL: p.url, ModelName: p.model, APIKey: key, Client: client}, stop, nil
		}
	}
	return nil, stop, fmt.Errorf("unknown provider %q: use sandbox, openai, deepgram or assemblyai", p.name)
}

func runRun(ctx context.Context, cl *cmdline) int {
	var pf providerFlags
	pf.register(cl)
	budget := cl.fs.String("budget", "", "the most the batch may spend, in dollars (over all its runs)")
	workers := cl.fs.Int("workers", 4, "transcribe this many recordings at a time")
	timeout := cl.fs.Duration("timeout", 10*time.Minute, "bound on each paid request; one that runs out may have been charged")
	out := cl.fs.String("out", "", "write .txt, .srt, .vtt and .json transcripts to this directory")
	lease := cl.fs.Duration("lease", 30*time.Second, "after a run is killed, how long its requests in flight wait before the next run declares them ambiguous")
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	if *workers < 1 {
		return cl.usageError("--workers must be at least 1")
	}
	var limit ledger.Amount
	if *budget != "" {
		b, err := ledger.ParseDecimal(strings.TrimPrefix(*budget, "$"), 6)
		if err != nil || b == 0 {
			return cl.usageError("--budget %q: give dollars, such as 5 or 12.50", *budget)
		}
		limit = b
	}
	price, err := pf.price()
	if err != nil {
		return cl.fail(err)
	}
	prov, stop, err := pf.build(cl, *timeout)
	if err != nil {
		return cl.fail(err)
	}
	defer stop()
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()

	var done, total atomic.Int64
	opts := recall.RunOptions{Provider: prov, PricePerMinute: price, Budget: limit, Workers: *workers, Out: *out, Timeout: *timeout, Lease: *lease}
	if !cl.json && isTerminal(cl.env.Stderr) {
		est, _ := a.Estimate(ctx, cl.args[0], price)
		total.Store(int64(est.Contents))
		opts.Progress = func(p recall.Progress) {
			if p.Chunk == p.Chunks {
				done.Add(1)
			}
			fmt.Fprintf(cl.env.Stderr, "\r\033[K[%d/%d] %s chunk %d/%d: %s", done.Load(), total.Load(), p.Path[:12], p.Chunk, p.Chunks, p.State)
		}
	}
	rep, err := a.Run(ctx, cl.args[0], opts)
	if opts.Progress != nil {
		fmt.Fprint(cl.env.Stderr, "\r\033[K")
	}
	if err != nil {
		return cl.fail(err)
	}
	money, _ := a.Money(context.WithoutCancel(ctx), cl.args[0])
	if cl.json {
		cl.emit(map[string]any{"run": rep, "money": money})
	} else {
		w := cl.env.Stdout
		fmt.Fprintf(w, "batch %s: %d requests paid for in this run; %d recordings done, %d ambiguous, %d failed safely, %d waiting\n",
			rep.Batch, rep.Paid, rep.Done, rep.Ambiguous, rep.Failed, rep.Waiting)
		fmt.Fprintf(w, "money: spent $%s, held $%s (of which $%s by ambiguous requests)\n", money.Spent.Decimal(6), money.Held.Decimal(6), money.HeldAmbiguous.Decimal(6))
		printProblems(cl, rep.Problems)
		if rep.Ambiguous > 0 {
			fmt.Fprintf(w, "some requests may have been charged without an answer: see 'recall-archive ambiguous %s'\n", rep.Batch)
		}
		if rep.Failed > 0 {
			fmt.Fprintf(w, "failures before payment can be retried: 'recall-archive retry-failed %s --safe-only'\n", rep.Batch)
		}
		if ctx.Err() != nil {
			fmt.Fprintln(w, "interrupted: run again to go on")
		}
	}
	switch {
	case rep.Ambiguous > 0:
		return ExitAmbiguous
	case rep.Failed > 0 || len(rep.Problems) > 0:
		return ExitItemProblems
	}
	return ExitOK
}

func runEstimate(ctx context.Context, cl *cmdline) int {
	var pf providerFlags
	pf.register(cl)
	if code, ok := cl.parse(1, 1); !ok {
		return code
	}
	price, err := pf.price()
	if err != nil {
		return cl.fail(err)
	}
	a, err := cl.open(ctx)
	if err != nil {
		return cl.fail(err)
	}
	defer a.Close()
	est, err := a.Estimate(ctx, cl.args[0], price)
	if err != nil {
		return cl.fail(err)
	}
	if cl.json {
		cl.emit(est)
		return ExitOK
	}
	fmt.Fprintf(cl.env.Stdout, "batch %s: %d recordings, %s of audio, $%s at $%s a minute (%s/%s)\nnot yet transcribed: %s, $%s\n",
		est.Batch, est.Contents, est.Duration.Round(time.Second), est.Cost.Decimal(6), price.Decimal(6), pf.name, pf.model,
		est.Remaining.Round(time.Second), est.RemainingCost.Decimal(6))
	return ExitOK
}

func runSandbox(ctx context.Context, cl *cmdline) int {
	addr := cl.fs.String("addr", "127.0.0.1:8787", "listen on this address")
	faults := cl.fs.String("faults", "", `inject faults: "N:FAULT" for request N, "FAULT=P%" at random; faults: charge-drop, hang, 429, 500, 502, 503`)
	refuseFor := cl.fs.Duration("refuse-for", 0, "refuse connections for this long after starting (nothing listens on the port)")
	if code, ok := cl.parse(0, 0); !ok {
		return code
	}
	plan, err := sandbox.ParsePlan(*faults)
	if err != nil {
		return cl.usageError("%v", err)
	}
	sb := sandbox.New(sandbox.Options{Plan: plan})
	if *refuseFor > 0 {
		fmt.Fprintf(cl.env.Stdout, "refusing connections on %s for %s\n", *addr, *refuseFor)
		select {
		case <-time.After(*refuseFor):
		case <-ctx.Done():
			return ExitOK
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return cl.fail(err)
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
	if cl.json {
		cl.emit(map[string]string{"url": "http://" + ln.Addr().String()})
	} else {
		fmt.Fprintf(cl.env.Stdout, "sandbox provider listening on http://%s (POST /v1/audio/transcriptions; GET /v1/sandbox/charges)\n", ln.Addr())
	}
	go func() {
		<-ctx.Done()
		sb.Close()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cl.fail(err)
	}
	return ExitOK
}

// isTerminal reports whether w is a terminal, for the progress line.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
