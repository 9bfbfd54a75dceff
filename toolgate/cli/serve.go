package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
)

// DBEnv names the environment variable that selects the journal database.
const DBEnv = "TOOLGATE_DB"

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func serve(ctx context.Context, args []string, env Env) int {
	cmd := newCommand("serve", "toolgate serve SPEC [--config FILE] [--upstream URL] (--stdio | --http ADDR) [--db DSN]", env)
	configPath := cmd.String("config", "", "the YAML configuration")
	upstream := cmd.String("upstream", "", "the upstream API's base URL (default: the configuration's, else the document's first server)")
	stdio := cmd.Bool("stdio", false, "serve MCP over standard input and output")
	httpAddr := cmd.String("http", "", "serve MCP over Streamable HTTP on `ADDR` (host:port, or a port on 127.0.0.1)")
	dsn := cmd.String("db", "", "the journal: a SQLite file or a postgres:// DSN (default $"+DBEnv+", else the data directory)")
	var origins listFlag
	cmd.Var(&origins, "allow-origin", "a browser `ORIGIN` allowed to call the HTTP endpoint (repeatable)")
	pos, code, ok := cmd.parse(args, 1)
	if !ok {
		return code
	}
	if *stdio == (*httpAddr != "") {
		return cmd.usageError("give either --stdio or --http ADDR")
	}
	cat, cfg, err := load(ctx, pos[0], *configPath)
	if err != nil {
		return cmd.fail(err)
	}
	base := *upstream
	if base == "" {
		base = cfg.Upstream.URL
	}
	if base == "" && len(cat.Doc.Servers) > 0 {
		base = cat.Doc.Servers[0]
	}
	if base == "" {
		return cmd.fail(fmt.Errorf("%s names no server: give --upstream URL or upstream.url in the configuration", pos[0]))
	}

	// Check the listening address before opening anything.
	var token string
	if *httpAddr != "" {
		if !strings.Contains(*httpAddr, ":") {
			*httpAddr = "127.0.0.1:" + *httpAddr
		}
		loopback, err := toolgate.Loopback(*httpAddr)
		if err != nil {
			return cmd.fail(err)
		}
		token = env.Getenv(toolgate.TokenEnv)
		if !loopback && token == "" {
			return cmd.fail(toolgate.ErrTokenRequired)
		}
	}

	// A call must end before its lease does, or recovery elsewhere would
	// take a call still in flight for one whose process died.
	lease := 30 * time.Second
	for _, t := range cat.Exposed() {
		lease = max(lease, t.Deadline+15*time.Second)
	}
	db, err := openDB(ctx, *dsn, env)
	if err != nil {
		return cmd.fail(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{Lease: lease})
	caller, err := toolgate.NewCaller(cat, base, cfg.Upstream.Auth, env.Getenv, nil, j)
	if err != nil {
		return cmd.fail(err)
	}
	srv, err := toolgate.NewServer(cat, caller)
	if err != nil {
		return cmd.fail(err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go recoverLoop(ctx, j, lease, env.Stderr)

	exposed := len(cat.Exposed())
	summary := fmt.Sprintf("%d tools (%d hidden) for %s", exposed, len(cat.Tools)-exposed, rubicon.RedactURL(caller.Base()))
	if *stdio {
		fmt.Fprintf(env.Stderr, "toolgate: serving %s over stdio\n", summary)
		t := &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}}
		if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return cmd.fail(err)
		}
		return ExitOK
	}
	h, err := toolgate.HTTPHandler(srv, toolgate.HTTPOptions{Token: token, AllowedOrigins: origins})
	if err != nil {
		return cmd.fail(err)
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return cmd.fail(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(env.Stderr, nil), slog.LevelWarn)}
	auth := "no token"
	if token != "" {
		auth = "bearer token from $" + toolgate.TokenEnv
	}
	fmt.Fprintf(env.Stderr, "toolgate: serving %s at http://%s/ (%s)\n", summary, ln.Addr(), auth)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return cmd.fail(err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
		return ExitOK
	}
}

// recoverLoop makes the calls a stopped process left in flight ambiguous,
// at start and then once per lease.
func recoverLoop(ctx context.Context, j *journal.Journal, lease time.Duration, log io.Writer) {
	for {
		ops, err := j.Recover(ctx)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(log, "toolgate: recovering calls left in flight: %v\n", err)
		}
		for _, op := range ops {
			fmt.Fprintf(log, "toolgate: call %s was in flight when its process stopped; its outcome is unknown (toolgate calls)\n", op.Key)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(lease):
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// openDB opens the journal database that --db, $TOOLGATE_DB or the data
// directory names.
func openDB(ctx context.Context, dsn string, env Env) (*sqlstore.DB, error) {
	if dsn == "" {
		dsn = env.Getenv(DBEnv)
	}
	if dsn == "" {
		dir := env.Getenv("XDG_DATA_HOME")
		if dir == "" {
			home := env.Getenv("HOME")
			if home == "" {
				return nil, fmt.Errorf("no home directory to keep the journal in: give --db or $%s", DBEnv)
			}
			dir = filepath.Join(home, ".local", "share")
		}
		dir = filepath.Join(dir, "toolgate")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create the data directory %s: %w", dir, err)
		}
		dsn = filepath.Join(dir, "journal.db")
	}
	return sqlstore.Open(ctx, dsn, sqlstore.Options{})
}

func calls(ctx context.Context, args []string, env Env) int {
	cmd := newCommand("calls", "toolgate calls [--db DSN] [--all]", env)
	dsn := cmd.String("db", "", "the journal: a SQLite file or a postgres:// DSN")
	all := cmd.Bool("all", false, "every recorded call, not only those whose outcome is unknown")
	if _, code, ok := cmd.parse(args, 0); !ok {
		return code
	}
	db, err := openDB(ctx, *dsn, env)
	if err != nil {
		return cmd.fail(err)
	}
	defer db.Close()
	f := journal.Filter{Kind: toolgate.JournalKind}
	if !*all {
		f.States = []journal.State{journal.Ambiguous}
	}
	ops, err := journal.New(db.JournalStore(), journal.Options{}).List(ctx, f)
	if err != nil {
		return cmd.fail(err)
	}
	if len(ops) == 0 {
		fmt.Fprintln(env.Stdout, "no calls with an unknown outcome")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATE\tCALL\tARGUMENTS\tWHEN\tWHY")
	for _, op := range ops {
		args := fmt.Sprint(op.Evidence["arguments"])
		if len(args) > 60 {
			args = args[:57] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%v %v\t%s\t%s\t%s\n", op.Key, op.State, op.Evidence["method"], op.Evidence["path"], args,
			op.Created.Local().Format(time.DateTime), op.LastError)
	}
	tw.Flush()
	fmt.Fprintln(env.Stdout, "\nCheck the upstream, then: toolgate resolve KEY (--applied | --not-applied) --note WHAT-YOU-CHECKED")
	return ExitOK
}

func resolve(ctx context.Context, args []string, env Env) int {
	cmd := newCommand("resolve", "toolgate resolve KEY (--applied | --not-applied) --note TEXT [--db DSN]", env)
	dsn := cmd.String("db", "", "the journal: a SQLite file or a postgres:// DSN")
	applied := cmd.Bool("applied", false, "the upstream did apply the call")
	notApplied := cmd.Bool("not-applied", false, "it did not; an identical call is allowed again")
	note := cmd.String("note", "", "what you checked (required)")
	by := cmd.String("by", "", "who decides (default: the current user)")
	pos, code, ok := cmd.parse(args, 1)
	if !ok {
		return code
	}
	if *applied == *notApplied || strings.TrimSpace(*note) == "" {
		return cmd.usageError("say either --applied or --not-applied, and --note what you checked")
	}
	who := *by
	if who == "" {
		who = env.Getenv("USER")
		if u, err := user.Current(); who == "" && err == nil {
			who = u.Username
		}
	}
	res := journal.Resolution{To: journal.Applied, By: who, Note: *note}
	if *notApplied {
		res.To = journal.NotApplied
	}
	db, err := openDB(ctx, *dsn, env)
	if err != nil {
		return cmd.fail(err)
	}
	defer db.Close()
	op, err := journal.New(db.JournalStore(), journal.Options{}).Resolve(ctx, pos[0], res)
	if err != nil {
		return cmd.fail(err)
	}
	fmt.Fprintf(env.Stdout, "%s resolved as %s by %s\n", op.Key, op.State, who)
	return ExitOK
}
