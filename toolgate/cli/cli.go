// Package cli is toolgate's command line.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitInterrupted is for a command stopped by a signal (SIGINT or
	// SIGTERM) before it could do its work: 128 + SIGINT, as shells say.
	ExitInterrupted = 130
)

// Env is what a command sees of the world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

const usage = `toolgate turns an OpenAPI document into an MCP tool server for LLM agents,
safe by default: destructive and privileged operations stay hidden unless the
configuration enables them, and nothing that may have been applied is retried.

usage:
  toolgate inspect SPEC [--config FILE] [--json]
      one row per operation: tool name, method, path, risk class and why,
      exposed or not and why, retry policy, deadline
  toolgate serve SPEC [--config FILE] [--upstream URL] (--stdio | --http ADDR) [--db DSN]
      the MCP server, over stdio or Streamable HTTP (ADDR defaults to the
      loopback interface; any other address needs a bearer token in
      $TOOLGATE_TOKEN)
  toolgate calls [--db DSN] [--all]
      the tool calls whose outcome is unknown (--all: every recorded call)
  toolgate resolve KEY (--applied | --not-applied) --note TEXT [--db DSN]
      settle an unknown call once a person has checked the upstream

SPEC is an OpenAPI 3.0 or 3.1 document (JSON or YAML) or a Swagger 2.0 one.
The journal of calls that change state is a SQLite file in the user's data
directory; $TOOLGATE_DB or --db names another file or a postgres:// DSN.

exit codes: 0 done, 1 failure, 2 usage, 130 interrupted
`

// Main runs toolgate with args (without the program name).
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "inspect":
		return inspect(ctx, args[1:], env)
	case "serve":
		return serve(ctx, args[1:], env)
	case "calls":
		return calls(ctx, args[1:], env)
	case "resolve":
		return resolve(ctx, args[1:], env)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "toolgate: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

// command is a command's flags and how to use it.
type command struct {
	*flag.FlagSet
	usage string
	env   Env
}

func newCommand(name, usage string, env Env) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	c := &command{FlagSet: fs, usage: usage, env: env}
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: %s\n", usage)
		fs.PrintDefaults()
	}
	return c
}

// parse parses the flags, which may come before or after the arguments,
// and checks that n arguments remain. When ok is false the command must
// stop with code.
func (c *command) parse(args []string, n int) (pos []string, code int, ok bool) {
	for {
		if err := c.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ExitOK, false
			}
			return nil, ExitUsage, false
		}
		rest := c.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) != n {
		c.Usage()
		return nil, ExitUsage, false
	}
	return pos, ExitOK, true
}

// usageError reports a misuse of the command.
func (c *command) usageError(format string, args ...any) int {
	fmt.Fprintf(c.env.Stderr, "toolgate %s: %s\n", c.Name(), fmt.Sprintf(format, args...))
	c.Usage()
	return ExitUsage
}

// fail reports a failure of the command.
func (c *command) fail(err error) int {
	fmt.Fprintf(c.env.Stderr, "toolgate %s: %v\n", c.Name(), err)
	if errors.As(err, new(*interruptedError)) {
		return ExitInterrupted
	}
	return ExitFailure
}

// interruptedError is a load that a signal stopped.
type interruptedError struct {
	path  string
	cause error
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted while loading %s (%v)", e.path, e.cause)
}

// load reads the document and the configuration and builds the catalog.
// When ctx is done (SIGINT or SIGTERM) it returns at once, whatever it
// was doing: a large document takes a while to load.
func load(ctx context.Context, specPath, configPath string) (*toolgate.Catalog, *config.Config, error) {
	cfg := config.Default()
	if configPath != "" {
		var err error
		if cfg, err = config.Load(configPath); err != nil {
			return nil, nil, err
		}
	}
	type result struct {
		cat *toolgate.Catalog
		err error
	}
	done := make(chan result, 1)
	go func() {
		doc, err := spec.LoadContext(ctx, specPath)
		if err != nil {
			done <- result{err: err}
			return
		}
		cat, err := toolgate.Build(doc, cfg)
		done <- result{cat, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			return nil, nil, &interruptedError{specPath, context.Cause(ctx)}
		}
		return r.cat, cfg, r.err
	case <-ctx.Done():
		return nil, nil, &interruptedError{specPath, context.Cause(ctx)}
	}
}

func inspect(ctx context.Context, args []string, env Env) int {
	cmd := newCommand("inspect", "toolgate inspect SPEC [--config FILE] [--json]", env)
	configPath := cmd.String("config", "", "the YAML configuration")
	asJSON := cmd.Bool("json", false, "print machine-readable JSON")
	pos, code, ok := cmd.parse(args, 1)
	if !ok {
		return code
	}
	cat, _, err := load(ctx, pos[0], *configPath)
	if err != nil {
		return cmd.fail(err)
	}
	rows, sum, err := cat.Inspect()
	if err != nil {
		return cmd.fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"summary": sum, "tools": rows})
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tMETHOD\tPATH\tRISK\tEXPOSED\tRETRY\tDEADLINE\tWHY")
	for _, r := range rows {
		exposed := "no"
		if r.Exposed {
			exposed = "yes"
		}
		risk := r.Risk
		if r.Override {
			risk += " (config)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s; %s\n", r.Name, r.Method, r.Path, risk, exposed, r.Retry, r.Deadline,
			strings.Join(r.Reasons, ", "), r.Exposure)
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "\n%d tools: %s; %d exposed (%s)\n", sum.Tools, classCounts(sum.ByClass), sum.Exposed, classCounts(sum.ExposedByClass))
	fmt.Fprintf(env.Stdout, "tools/list: %d bytes, about %d tokens\n", sum.ListBytes, sum.ListTokens)
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.Stdout, "warning: %s\n", w)
	}
	printNotes(env.Stdout, sum.Notes)
	return ExitOK
}

// maxNotes is how many notes inspect's table shows; --json gives them all.
const maxNotes = 20

// printNotes prints what loading changed in the document's schemas.
func printNotes(w io.Writer, notes []string) {
	for i, n := range notes {
		if i == maxNotes {
			fmt.Fprintf(w, "note: %d more changes to the document's schemas (--json lists them all)\n", len(notes)-maxNotes)
			break
		}
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func classCounts(m map[string]int) string {
	var parts []string
	for _, c := range []string{"read", "write", "destructive", "privileged"} {
		parts = append(parts, fmt.Sprintf("%d %s", m[c], c))
	}
	return strings.Join(parts, ", ")
}
