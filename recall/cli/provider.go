package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// providerFlags are the flags that choose a provider.
type providerFlags struct {
	name, url, model, keyEnv, prices, project string
	getenv                                    func(string) string
	// speakers is --speakers, for the commands that transcribe: see
	// provider.Options.Speakers.
	speakers int
	// language, prompt and vocabulary (a file) are the hints.
	language, prompt, vocabulary string
}

// registerSpeakers declares --speakers in f: alone, labels without a
// count; with a number, that many speakers expected.
func (p *providerFlags) registerSpeakers(f *pflag.FlagSet) {
	f.IntVar(&p.speakers, "speakers", 0, "label who speaks; --speakers=N expects N speakers where the provider takes a count ("+speakerHelp()+")")
	f.Lookup("speakers").NoOptDefVal = strconv.Itoa(provider.SpeakersUnknown)
	f.StringVar(&p.language, "language", "", "the audio's `LANGUAGE`, such as en or pt-BR (default: the provider detects it)")
	f.StringVar(&p.prompt, "prompt", "", "`TEXT` that guides the transcription: context, names, spelling")
	f.StringVar(&p.vocabulary, "vocabulary", "", "a `FILE` of words and phrases the audio holds, one a line (# starts a comment)")
}

// hints reads the hints the flags give.
func (p *providerFlags) hints() (provider.Hints, error) {
	h := provider.Hints{Language: p.language, Prompt: strings.TrimSpace(p.prompt)}
	if p.vocabulary == "" {
		return h, nil
	}
	data, err := os.ReadFile(p.vocabulary)
	if err != nil {
		return h, fmt.Errorf("--vocabulary: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if term := strings.TrimSpace(line); term != "" && !strings.HasPrefix(term, "#") {
			h.Vocabulary = append(h.Vocabulary, term)
		}
	}
	if len(h.Vocabulary) == 0 {
		return h, fmt.Errorf("--vocabulary: %s holds no terms: write one word or phrase a line", p.vocabulary)
	}
	return h, nil
}

// speakerHelp lists the providers that label speakers, and how.
func speakerHelp() string {
	var parts []string
	for _, r := range provider.Registered() {
		if r.Speakers != "" {
			parts = append(parts, r.Name+": "+r.Speakers)
		}
	}
	return strings.Join(parts, "; ")
}

// register declares the flags in f.
func (p *providerFlags) register(f *pflag.FlagSet) {
	p.registerPrice(f)
	f.StringVar(&p.url, "provider-url", "", "the provider's base `URL` (default: the provider's own; for sandbox, a sandbox started for the run)")
	f.StringVar(&p.keyEnv, "api-key-env", "", "the environment `VARIABLE` that holds the API key (default: the provider's, such as OPENAI_API_KEY); keys are never taken from flags")
	f.StringVar(&p.project, "deepgram-project", "", "deepgram: the `PROJECT` whose request log reconcile searches (default: $DEEPGRAM_PROJECT_ID)")
}

// registerPrice declares in f the flags that price a provider's work.
func (p *providerFlags) registerPrice(f *pflag.FlagSet) {
	f.StringVar(&p.name, "provider", "sandbox", "the `PROVIDER`: "+providerHelp())
	command.CompleteWith(f, "provider", provider.Names()...)
	f.StringVar(&p.model, "model", "", "the `MODEL` (default: the provider's: "+modelHelp()+")")
	f.StringVar(&p.prices, "prices", "", `a JSON `+"`FILE`"+` of prices over the defaults: {"provider/model": "dollars per minute"} (default: prices.json in the config directory, if there)`)
}

// providerHelp lists the providers for --provider's help, the play
// money's with what it is.
func providerHelp() string {
	var parts []string
	for _, r := range provider.Registered() {
		if r.Play() {
			parts = append(parts, r.Name+" ("+r.About+")")
		} else {
			parts = append(parts, r.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// modelHelp lists each provider's default model for --model's help.
func modelHelp() string {
	var parts []string
	for _, r := range provider.Registered() {
		parts = append(parts, r.Name+" "+r.DefaultModel)
	}
	return strings.Join(parts, ", ")
}

// registration returns the registration of --provider; the zero one for
// a name not registered, which known refuses.
func (p *providerFlags) registration() provider.Registration {
	r, _ := provider.Lookup(p.name)
	return r
}

// defaults fills what the provider decides: model, key variable, URL.
func (p *providerFlags) defaults() {
	d := p.registration()
	if p.model == "" {
		p.model = d.DefaultModel
	}
	if p.keyEnv == "" {
		p.keyEnv = d.KeyEnv
	}
	if p.url == "" {
		p.url = d.BaseURL
	}
	if p.project == "" && p.getenv != nil {
		p.project = p.getenv("DEEPGRAM_PROJECT_ID")
	}
}

// known returns a usage error unless --provider names a provider.
func (p *providerFlags) known() error {
	if !slices.Contains(provider.Names(), p.name) {
		return command.Usagef("--provider %q: give one of %s", p.name, strings.Join(provider.Names(), ", "))
	}
	return nil
}

// pricing returns the model's price per minute and how the provider
// rounds each request, from the prices file if there is one.
func (p *providerFlags) pricing(r *command.Run) (recall.Pricing, error) {
	if err := p.known(); err != nil {
		return recall.Pricing{}, err
	}
	p.getenv = r.Getenv
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
			return recall.Pricing{}, err
		}
	}
	hints, err := p.hints()
	if err != nil {
		return recall.Pricing{}, err
	}
	return prices.For(provider.Options{Name: p.name, Model: p.model, Speakers: p.speakers, Hints: hints})
}

// again returns the flags that choose the same provider, model and
// settings again, for a command a run suggests: no provider for the
// sandbox it starts itself.
func (p *providerFlags) again() string { return p.flags(p.name != "sandbox" || p.url != "") }

// chosen returns the flags that choose the same provider, model and
// settings again, the provider always: for retranscribe, which takes it.
func (p *providerFlags) chosen() string { return p.flags(true) }

// flags returns the flags that choose the same provider, model and
// settings again; named, with the provider and model.
func (p *providerFlags) flags(named bool) string {
	var b strings.Builder
	if named {
		fmt.Fprintf(&b, " --provider %s --model %s", p.name, p.model)
	}
	d := p.registration()
	if p.url != "" && p.url != d.BaseURL {
		fmt.Fprintf(&b, " --provider-url %s", p.url)
	}
	if p.keyEnv != "" && p.keyEnv != d.KeyEnv {
		fmt.Fprintf(&b, " --api-key-env %s", p.keyEnv)
	}
	return b.String() + p.settingsFlags()
}

// settingsFlags returns the flags that ask for the same settings again:
// a command a run suggests makes the same transcript.
func (p *providerFlags) settingsFlags() string {
	var b strings.Builder
	switch {
	case p.speakers == provider.SpeakersUnknown:
		b.WriteString(" --speakers")
	case p.speakers > 0:
		fmt.Fprintf(&b, " --speakers=%d", p.speakers)
	}
	for _, f := range []struct{ name, value string }{{"language", p.language}, {"prompt", p.prompt}, {"vocabulary", p.vocabulary}} {
		if f.value != "" {
			fmt.Fprintf(&b, " --%s %s", f.name, output.ShellQuote(f.value))
		}
	}
	return b.String()
}

// priced is a command's work on the archive at the provider's price.
func (p *providerFlags) priced(o recall.Options, do func(context.Context, *command.Run, *recall.Archive, recall.Pricing) error) func(context.Context, *command.Run) error {
	return func(ctx context.Context, r *command.Run) error {
		pricing, err := p.pricing(r) // a wrong prices file is told before the archive is opened
		if err != nil {
			return err
		}
		return archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error { return do(ctx, r, a, pricing) })(ctx, r)
	}
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
// without a URL; stop shuts that sandbox down. timeout bounds each of the
// provider's requests.
func (p *providerFlags) build(r *command.Run, timeout time.Duration) (prov *provider.Provider, stop func(), err error) {
	stop = func() {}
	if err := p.known(); err != nil {
		return nil, stop, err
	}
	p.getenv = r.Getenv
	p.defaults()
	if p.speakers < provider.SpeakersUnknown {
		return nil, stop, command.Usagef("--speakers=%d: give a number of speakers from 1, or --speakers alone", p.speakers)
	}
	hints, err := p.hints()
	if err != nil {
		return nil, stop, err
	}
	o := provider.Options{Name: p.name, BaseURL: p.url, Model: p.model, Project: p.project, Timeout: timeout, Speakers: p.speakers, Hints: hints}
	if _, err := provider.Check(o); err != nil {
		return nil, stop, err // before the key is read
	}
	switch {
	case p.name == "sandbox" && o.BaseURL == "":
		if o.BaseURL, stop, err = startSandbox(r); err != nil {
			return nil, stop, err
		}
	case p.keyEnv != "":
		if o.APIKey = r.Getenv(p.keyEnv); o.APIKey == "" {
			return nil, stop, fmt.Errorf("the API key is missing: set $%s (or name another variable with --api-key-env)", p.keyEnv)
		}
	}
	prov, err = provider.New(o)
	if err != nil {
		stop()
		return nil, func() {}, err
	}
	return prov, stop, nil
}

// startSandbox starts the built-in sandbox provider on loopback for one
// command, and returns its URL and what stops it.
func startSandbox(r *command.Run) (url string, stop func(), err error) {
	sb := sandbox.New(sandbox.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", func() {}, err
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	url = "http://" + ln.Addr().String()
	if !r.JSON {
		fmt.Fprintf(r.Stderr, "using the built-in sandbox provider at %s: placeholder transcripts, nothing is really charged\n", url)
	}
	return url, func() {
		sb.Close()
		srv.Close()
	}, nil
}
