package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/consoleui"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// defaultConsoleAddr is where the console listens unless told.
const defaultConsoleAddr = "127.0.0.1:8090"

// consoleCommand is "toolgate console": the web console.
func consoleCommand() *command.Command {
	var configPath, addr string
	return &command.Command{
		Name: "console", Args: []command.Arg{specArg}, DB: true,
		Synopsis: "SPEC [--config FILE] [--db DSN] [--addr ADDR]",
		Summary:  "a web page to review the tools, change the configuration and settle ambiguous calls",
		Help: `The page lists every tool with its risk class and why, beside its exposure,
retry mode and deadline; changes exposure, retry and deadline per tool or tag,
shows the diff of the configuration, checks it with the loader that serve
uses, and writes --config FILE atomically, keeping its comments (enabling a
destructive or privileged tool asks for a confirmation); and lists the calls
whose outcome is unknown, with their evidence, to settle them. GET /metrics
answers in Prometheus's text format.

--addr listens on the loopback interface when ADDR is a port; any other
address needs a token in $TOOLGATE_TOKEN, which a person enters once, with
their name, on the sign-in page. On loopback without a token, what a person
settles is recorded under the user who started the console.`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&configPath, "config", "", "the configuration, a YAML `FILE`, which the page changes (created if missing)")
			f.StringVar(&addr, "addr", defaultConsoleAddr, "listen on `ADDR` (host:port, or a port on 127.0.0.1)")
		},
		Check: func(r *command.Run) error {
			a, err := command.ListenAddress("--addr", addr)
			if err != nil {
				return command.Usagef("%v", err)
			}
			addr = a
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error { return serveConsole(ctx, r, configPath, addr) },
	}
}

func serveConsole(ctx context.Context, r *command.Run, configPath, addr string) error {
	token := r.Getenv(toolgate.TokenEnv)
	if !console.IsLoopback(addr) && token == "" {
		return toolgate.ErrTokenRequired
	}
	doc, err := spec.LoadContext(ctx, r.Args[0])
	if err != nil {
		if ctx.Err() != nil {
			return command.Interrupted(fmt.Errorf("interrupted while loading %s (%v)", r.Args[0], context.Cause(ctx)))
		}
		return loadError(err)
	}
	db, err := openDB(ctx, r)
	if err != nil {
		return err
	}
	defer db.Close()
	log := slog.New(slog.NewTextHandler(r.Stderr, nil))
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	ui, err := consoleui.New(consoleui.Options{Doc: doc, SpecPath: r.Args[0], ConfigPath: configPath, Registry: reg, Log: log})
	if err != nil {
		return err
	}
	c, err := console.New(console.Options{Product: "toolgate", Token: token, TokenEnv: toolgate.TokenEnv, User: r.User(),
		Journal: journal.New(db.JournalStore(), journal.Options{}), Work: consoleui.Work(), Pages: ui.Pages(), Registry: reg, Log: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return command.ListenError("--addr", addr, err)
	}
	auth := "no token: loopback only"
	if token != "" {
		auth = "sign in with the token in $" + toolgate.TokenEnv
	}
	r.Logf("the console is at http://%s/ (%s)", ln.Addr(), auth)
	return c.Serve(ctx, ln)
}
