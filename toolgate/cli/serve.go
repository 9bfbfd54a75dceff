package cli

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"

	"github.com/spf13/pflag"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// serveFlags are serve's flags.
type serveFlags struct {
	config, upstream, http, mode string
	stdio                        bool
	origins                      []string
}

// serveCommand is "toolgate serve": the MCP server.
func serveCommand() *command.Command {
	var sf serveFlags
	return &command.Command{
		Name: "serve", Args: []command.Arg{specArg}, DB: true,
		Synopsis: "SPEC [--config FILE] [--upstream URL] [--mode tools|search|auto] (--stdio | --http ADDR) [--db DSN]",
		Summary:  "the MCP server, over stdio or Streamable HTTP",
		Help: `--http ADDR listens on the loopback interface when ADDR is a port; any other
address needs a bearer token in $TOOLGATE_TOKEN. Over HTTP, GET /metrics
answers in Prometheus's text format, behind the same token: calls by tool,
risk class and outcome, retries, deadlines that ran out, and the calls whose
outcome is unknown. Each call is logged on standard error, as a structured
line. Calls of tools that change state are journaled; calls that a stopped
server left in flight become ambiguous while it serves (toolgate calls).

--mode search serves three tools instead of one per operation:
search_operations, describe_operation and call_operation, for APIs too large
for a client's tool list; a call through them is checked, confirmed, retried,
bounded and journaled as a listed tool's is. --mode auto serves search mode
past 128 exposed tools or 256 KiB of tools/list, and says which it chose.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&sf.config, "config", "", "the configuration, a YAML `FILE`")
			f.StringVar(&sf.upstream, "upstream", "", "the upstream API's base `URL` (default: the configuration's, else the document's first server)")
			f.StringVar(&sf.mode, "mode", "", "how to serve the operations, `MODE`: tools (one tool each), search (three tools that search, describe and call them) or auto (search for large APIs); default: the configuration's mode, else tools")
			f.BoolVar(&sf.stdio, "stdio", false, "serve MCP over standard input and output")
			f.StringVar(&sf.http, "http", "", "serve MCP over Streamable HTTP on `ADDR` (host:port, or a port on 127.0.0.1)")
			f.StringArrayVar(&sf.origins, "allow-origin", nil, "a browser `ORIGIN` allowed to call the HTTP endpoint (repeatable)")
		},
		Run: func(ctx context.Context, r *command.Run) error { return serve(ctx, r, sf) },
	}
}

func serve(ctx context.Context, r *command.Run, sf serveFlags) error {
	if err := sf.check(); err != nil {
		return err
	}
	cat, cfg, err := load(ctx, r.Args[0], sf.config)
	if err != nil {
		return loadError(err)
	}
	mode := cfg.Mode
	if sf.mode != "" {
		mode = config.Mode(sf.mode)
	}
	mode, why, err := toolgate.ChooseMode(cat, mode)
	if err != nil {
		return err
	}
	if err := cat.MissingCredentials(); err != nil {
		return err
	}
	if err := toolgate.CheckUpstream(cat, sf.upstream, cfg.Upstream); err != nil {
		return err
	}
	token := r.Getenv(toolgate.TokenEnv)
	forward := forwards(cfg.Upstream)
	switch {
	case forward != "" && sf.stdio:
		return fmt.Errorf("%s forwards the MCP client's bearer token, which only Streamable HTTP carries: serve with --http ADDR", forward)
	case forward != "" && token != "":
		return toolgate.ErrTokenAndForward
	}
	if sf.http != "" {
		// Check the listening address before opening anything.
		loopback, err := toolgate.Loopback(sf.http)
		if err != nil {
			return err
		}
		if !loopback && token == "" && forward == "" {
			return toolgate.ErrTokenRequired
		}
	}
	db, err := openDB(ctx, r)
	if err != nil {
		return err
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{Lease: toolgate.Lease(cat)})
	caller, err := toolgate.NewCaller(cat, sf.upstream, cfg.Upstream, r.Getenv, nil, j)
	if err != nil {
		return err
	}
	reg, err := serveMetrics(j)
	if err != nil {
		return err
	}
	caller.Instrument(reg.calls, slog.New(slog.NewTextHandler(r.Stderr, nil)))
	newServer := toolgate.NewServer
	if mode == config.ModeSearch {
		newServer = toolgate.NewSearchServer
	}
	srv, err := newServer(cat, caller)
	if err != nil {
		return err
	}
	g := &toolgate.Gateway{Server: srv, Caller: caller, Log: func(line string) { r.Logf("%s", line) }}
	exposed := len(cat.Exposed())
	summary := fmt.Sprintf("%s (%d hidden) for %s", output.Plural(exposed, "tool"), len(cat.Tools)-exposed, rubicon.RedactURL(caller.Base()))
	if mode == config.ModeSearch {
		summary += fmt.Sprintf(" in search mode (%s, %s and %s)", toolgate.SearchTool, toolgate.DescribeTool, toolgate.CallTool)
	}
	if why != "" {
		r.Logf("%s", why)
	}
	if sf.stdio {
		r.Logf("serving %s over stdio", summary)
		return g.ServeStdio(ctx, r.Stdin, r.Stdout)
	}
	ln, err := net.Listen("tcp", sf.http)
	if err != nil {
		return command.ListenError("--http", sf.http, err)
	}
	auth := "no token"
	switch {
	case token != "":
		auth = "bearer token from $" + toolgate.TokenEnv
	case forward != "":
		auth = "each client's bearer token, forwarded to the upstream by " + forward
	}
	r.Logf("serving %s at http://%s/ (%s)", summary, ln.Addr(), auth)
	return g.ServeHTTP(ctx, ln, toolgate.HTTPOptions{Token: token, AllowedOrigins: sf.origins, ForwardClientToken: forward != "",
		Metrics: promhttp.HandlerFor(reg.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})})
}

// check checks what the flags say before anything is read.
func (sf *serveFlags) check() error {
	if sf.stdio == (sf.http != "") {
		return command.Usagef("give either --stdio or --http ADDR")
	}
	if sf.http != "" {
		addr, err := command.ListenAddress("--http", sf.http)
		if err != nil {
			return command.Usagef("%v", err)
		}
		sf.http = addr
	}
	if sf.mode != "" {
		if _, err := config.ParseMode(sf.mode); err != nil {
			return command.Usagef("--mode is %q; %s", sf.mode, config.ModeChoices)
		}
	}
	for _, o := range sf.origins {
		if _, err := toolgate.ParseOrigin(o); err != nil {
			return err
		}
	}
	return nil
}

// forwards names the setting that forwards the MCP client's bearer
// token to the upstream, or "".
func forwards(up config.Upstream) string {
	if up.Auth.Type == config.AuthForward {
		return "upstream.auth"
	}
	for _, name := range slices.Sorted(maps.Keys(up.Schemes)) {
		if up.Schemes[name].Type == config.AuthForward {
			return "upstream.schemes." + name
		}
	}
	return ""
}

// served is what serve's /metrics reports.
type served struct {
	registry *prometheus.Registry
	calls    *toolgate.Metrics
}

// serveMetrics registers the metrics of a server of tools over
// journal j, in a registry of its own: the calls, the ambiguous calls in
// the journal, and the process's.
func serveMetrics(j *journal.Journal) (served, error) {
	reg := prometheus.NewRegistry()
	m, err := toolgate.NewMetrics(reg)
	if err != nil {
		return served{}, err
	}
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), console.BuildInfo("toolgate"),
		console.NewAmbiguousCollector(j, toolgate.JournalKind, "toolgate_ambiguous_open", "Tool calls whose outcome is unknown, for a person to settle.")} {
		if err := reg.Register(c); err != nil {
			return served{}, err
		}
	}
	return served{reg, m}, nil
}
