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

SPEC is an OpenAPI 3.0 or 3.1 document (JSON or YAML) or a Swagger 2.0 one.

exit codes: 0 done, 1 failure, 2 usage
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
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "toolgate: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

// flags parses a command's flags, which may come before or after the
// arguments.
func flags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// load reads the document and the configuration and builds the catalog.
func load(specPath, configPath string) (*toolgate.Catalog, *config.Config, error) {
	cfg := config.Default()
	if configPath != "" {
		var err error
		if cfg, err = config.Load(configPath); err != nil {
			return nil, nil, err
		}
	}
	doc, err := spec.Load(specPath)
	if err != nil {
		return nil, nil, err
	}
	cat, err := toolgate.Build(doc, cfg)
	return cat, cfg, err
}

func inspect(_ context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	configPath := fs.String("config", "", "the YAML configuration")
	asJSON := fs.Bool("json", false, "print machine-readable JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "usage: toolgate inspect SPEC [--config FILE] [--json]\n")
		fs.PrintDefaults()
	}
	pos, err := flags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if len(pos) != 1 {
		fs.Usage()
		return ExitUsage
	}
	cat, _, err := load(pos[0], *configPath)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolgate inspect: %v\n", err)
		return ExitFailure
	}
	rows, sum, err := cat.Inspect()
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolgate inspect: %v\n", err)
		return ExitFailure
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
	return ExitOK
}

func classCounts(m map[string]int) string {
	var parts []string
	for _, c := range []string{"read", "write", "destructive", "privileged"} {
		parts = append(parts, fmt.Sprintf("%d %s", m[c], c))
	}
	return strings.Join(parts, ", ")
}
