// Package cli is recall-archive's command line: flags, output and exit
// codes over package recall.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rubicon-go/rubicon/recall"
)

// Exit codes, documented in the help.
const (
	ExitOK = 0
	// ExitFailure: the command could not do its job.
	ExitFailure = 1
	// ExitUsage: the command line was wrong.
	ExitUsage = 2
	// ExitAmbiguous: the command finished, and some items are ambiguous:
	// they may have been paid for, and need a person or a reconciliation.
	ExitAmbiguous = 3
	// ExitItemProblems: the command finished, and some items failed or were
	// rejected; the others went through.
	ExitItemProblems = 4
)

// DBEnv names the environment variable that selects the database when
// --db is not given.
const DBEnv = "RECALL_DB"

// Env is what a command sees of the world.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Options open the archive; tests point them at their own tools.
	Options recall.Options
}

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, c *cmdline) int
}

var commands []command

func init() {
	commands = []command{
		{"add", "BATCH PATH...", "find the media under PATH, hash each file, record it in BATCH", runAdd},
		{"estimate", "BATCH", "total duration and cost at the provider's price", runEstimate},
		{"run", "BATCH", "transcribe the batch, paying at most once for each recording", runRun},
		{"status", "BATCH", "items per state; money estimated, held and spent", runStatus},
		{"retry-failed", "BATCH --safe-only", "queue again every failure known to be before payment", runRetryFailed},
		{"ambiguous", "[BATCH]", "requests that may have been charged, with their evidence", runAmbiguous},
		{"resolve", "KEY (--applied [--transcript FILE] | --not-applied) --note TEXT", "record a person's decision on an ambiguous request", runResolve},
		{"reconcile", "BATCH", "ask the provider about ambiguous requests, and resolve them from its answer", runReconcile},
		{"search", "QUERY", "find words in every transcript, with the file and the time", runSearch},
		{"export", "BATCH --out DIR", "write the batch's transcripts", runExport},
		{"sandbox", "", "run the built-in sandbox provider", runSandbox},
	}
}

// cmdline is a command being run: its flags, arguments and output.
type cmdline struct {
	env    Env
	fs     *flag.FlagSet
	db     string
	json   bool
	args   []string
	global globalFlags
}

type globalFlags struct {
	db   string
	json bool
}

// Main runs recall-archive with args (without the program name) and returns
// the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	top := flag.NewFlagSet("recall-archive", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	var g globalFlags
	top.StringVar(&g.db, "db", "", "")
	top.BoolVar(&g.json, "json", false, "")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(env.Stdout)
			return ExitOK
		}
		fmt.Fprintf(env.Stderr, "recall-archive: %v\n\n", err)
		usage(env.Stderr)
		return ExitUsage
	}
	rest := top.Args()
	if len(rest) == 0 {
		usage(env.Stderr)
		return ExitUsage
	}
	name := rest[0]
	if name == "help" {
		if len(rest) > 1 {
			if c := find(rest[1]); c != nil {
				newCmdline(env, *c, g).fs.Usage()
				return ExitOK
			}
		}
		usage(env.Stdout)
		return ExitOK
	}
	c := find(name)
	if c == nil {
		fmt.Fprintf(env.Stderr, "recall-archive: unknown command %q\n\n", name)
		usage(env.Stderr)
		return ExitUsage
	}
	cl := newCmdline(env, *c, g)
	cl.args = rest[1:]
	return c.run(ctx, cl)
}

func find(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func newCmdline(env Env, c command, g globalFlags) *cmdline {
	cl := &cmdline{env: env, global: g}
	cl.fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	cl.fs.SetOutput(env.Stderr)
	cl.fs.StringVar(&cl.db, "db", g.db, "database: a SQLite file, or a postgres:// DSN (default: $"+DBEnv+", else a file in the user's data directory)")
	cl.fs.BoolVar(&cl.json, "json", g.json, "print machine-readable JSON")
	cl.fs.Usage = func() {
		w := cl.fs.Output()
		fmt.Fprintf(w, "usage: recall-archive %s [flags] %s\n\n%s.\n\nflags:\n", c.name, c.args, capitalize(c.summary))
		cl.fs.PrintDefaults()
		fmt.Fprint(w, exitCodes)
	}
	return cl
}

const exitCodes = `
exit codes:
  0  done
  1  failure: the command could not do its job
  2  usage: the command line was wrong
  3  done, with ambiguous items (they may have been paid for: see 'recall-archive ambiguous')
  4  done, with items that failed or were rejected (listed in the output)
`

func usage(w io.Writer) {
	fmt.Fprint(w, `recall-archive transcribes a folder of recordings through a paid speech-to-text
API, and never pays twice for the same recording.

usage: recall-archive [--db DSN] [--json] COMMAND [flags] [arguments]

commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'recall-archive help COMMAND' for a command's flags.

The database is a SQLite file (default: recall.db in the user's data
directory; $`+DBEnv+` overrides it, and --db overrides both), or a
postgres:// DSN for several workers on several machines.
`)
	fmt.Fprint(w, exitCodes)
}

// open opens the archive the flags and environment select.
func (cl *cmdline) open(ctx context.Context) (*recall.Archive, error) {
	dsn := cl.db
	if dsn == "" {
		dsn = cl.env.Getenv(DBEnv)
	}
	if dsn == "" {
		dir, err := dataDir(cl.env.Getenv)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create the data directory %s: %w", dir, err)
		}
		dsn = filepath.Join(dir, "recall.db")
	}
	return recall.Open(ctx, dsn, cl.env.Options)
}

// dataDir is recall-archive's directory in the user's data directory
// ($XDG_DATA_HOME, else ~/.local/share).
func dataDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "recall-archive"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory to keep the database in: give --db or $%s", DBEnv)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "recall-archive"), nil
}

// parse parses the command's flags, which may come before, between or
// after the arguments ("--" ends them), and checks that from min to max
// arguments remain (max < 0: no upper bound). ok is false when the command
// must stop with code.
func (cl *cmdline) parse(min, max int) (code int, ok bool) {
	var positional []string
	args := cl.args
	for {
		if err := cl.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return ExitOK, false
			}
			return ExitUsage, false
		}
		rest := cl.fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	cl.args = positional
	switch {
	case len(cl.args) < min:
		return cl.usageError("missing arguments"), false
	case max >= 0 && len(cl.args) > max:
		return cl.usageError("too many arguments: %q", cl.args[max:]), false
	}
	return 0, true
}

// usageError prints a usage problem and the command's usage.
func (cl *cmdline) usageError(format string, args ...any) int {
	fmt.Fprintf(cl.env.Stderr, "recall-archive %s: %s\n\n", cl.fs.Name(), fmt.Sprintf(format, args...))
	cl.fs.Usage()
	return ExitUsage
}

// fail prints err and returns ExitFailure.
func (cl *cmdline) fail(err error) int {
	fmt.Fprintf(cl.env.Stderr, "recall-archive %s: %v\n", cl.fs.Name(), err)
	return ExitFailure
}

// emit prints v as JSON.
func (cl *cmdline) emit(v any) {
	enc := json.NewEncoder(cl.env.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
