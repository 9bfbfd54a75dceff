package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/consoleui"
)

// TokenEnv names the environment variable that holds the console's bearer
// token, which it needs beyond the loopback interface.
const TokenEnv = "RECALL_TOKEN"

// errTokenRequired is returned when the console would listen beyond
// loopback without a token.
var errTokenRequired = errors.New("listening on an address other than loopback requires a bearer token in $" + TokenEnv +
	" (16 characters or more, such as the output of openssl rand -hex 32)")

// defaultConsoleAddr is where the console listens unless told.
const defaultConsoleAddr = "127.0.0.1:8091"

// consoleCommand is "recall-archive console": the web console.
func consoleCommand(o recall.Options) *command.Command {
	var pf providerFlags
	var addr string
	return &command.Command{
		Name: "console", DB: true,
		Synopsis: "[--db DSN] [--addr ADDR] [--provider P] [--model M] [--prices FILE]",
		Summary:  "a web page to follow the batches, settle ambiguous requests and search the transcripts",
		Help: `The page lists each batch with its recordings' progress per state, its money
estimated, held and spent against its budget, and its ambiguous requests;
settles an ambiguous request as applied (with the transcript file, if the
provider has it) or not applied, as resolve does; queues again what failed
safely, as retry-failed --safe-only does; searches every transcript and shows
each one with its times. --provider, --model and --prices price the
estimates, as for estimate. GET /metrics answers in Prometheus's text format.

--addr listens on the loopback interface when ADDR is a port; any other
address needs a token in $` + TokenEnv + `, which a person enters once, with
their name, on the sign-in page. On loopback without a token, what a person
settles is recorded under the user who started the console.`,
		Flags: func(f *pflag.FlagSet) {
			pf.registerPrice(f)
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
		Run: func(ctx context.Context, r *command.Run) error { return serveConsole(ctx, r, o, &pf, addr) },
	}
}

func serveConsole(ctx context.Context, r *command.Run, o recall.Options, pf *providerFlags, addr string) error {
	token := r.Getenv(TokenEnv)
	if !console.IsLoopback(addr) && token == "" {
		return errTokenRequired
	}
	pricing, err := pf.pricing(r)
	if err != nil {
		return err
	}
	dsn, err := r.DSN()
	if err != nil {
		return err
	}
	if err := existing(dsn); err != nil {
		return err
	}
	a, err := recall.Open(ctx, dsn, o)
	if err != nil {
		return err
	}
	defer a.Close()
	log := slog.New(slog.NewTextHandler(r.Stderr, nil))
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	ui, err := consoleui.New(consoleui.Options{Archive: a, Pricing: pricing, Registry: reg, Log: log})
	if err != nil {
		return err
	}
	c, err := console.New(console.Options{Product: "recall", Token: token, TokenEnv: TokenEnv, User: r.User(),
		Journal: ui.Journal(), Work: ui.Work(), Pages: ui.Pages(), Registry: reg, Log: log})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return command.ListenError("--addr", addr, err)
	}
	auth := "no token: loopback only"
	if token != "" {
		auth = "sign in with the token in $" + TokenEnv
	}
	r.Logf("the console is at http://%s/ (%s)", ln.Addr(), auth)
	return c.Serve(ctx, ln)
}

// existing refuses an archive file that does not exist: the console shows
// an archive, and an empty one made by a mistyped --db would only mislead.
func existing(dsn string) error {
	if strings.Contains(dsn, "://") || strings.HasPrefix(dsn, "file:") || dsn == ":memory:" {
		return nil
	}
	if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no archive at %s: give the archive's file with --db (or $%s), or make one with recall-archive add", dsn, DBEnv)
	}
	return nil
}
