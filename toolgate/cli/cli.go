// Package cli is toolgate's command line: one command per file, on the
// skeleton both products share (internal/command).
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Exit codes.
const (
	ExitOK          = command.ExitOK
	ExitFailure     = command.ExitFailure
	ExitUsage       = command.ExitUsage
	ExitInterrupted = command.ExitInterrupted
)

// DBEnv names the environment variable that selects the journal database.
const DBEnv = "TOOLGATE_DB"

// Env is what a command sees of the world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Main runs toolgate with args (without the program name) and returns the
// exit code.
func Main(ctx context.Context, args []string, env Env) int {
	return program().Main(ctx, args, command.Env{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Getenv: env.Getenv})
}

// program is toolgate's command line, made anew for each run.
func program() *command.Program {
	return &command.Program{
		Name: "toolgate",
		Intro: `toolgate turns an OpenAPI document into an MCP tool server for LLM agents,
safe by default: destructive and privileged operations stay hidden unless the
configuration enables them, and nothing that may have been applied is retried.`,
		More: `SPEC is an OpenAPI 3.0 or 3.1 document (JSON or YAML) or a Swagger 2.0 one.
The journal of calls that change state is a SQLite file in the user's data
directory; $TOOLGATE_DB or --db names another file or a postgres:// DSN.`,
		Commands:  []*command.Command{inspectCommand(), serveCommand(), clientConfigCommand(), consoleCommand(), callsCommand(), resolveCommand()},
		ExitCodes: []command.ExitCode{{Code: ExitInterrupted, Meaning: "interrupted (SIGINT or SIGTERM) while loading"}},
		DB:        command.Database{Env: DBEnv, File: "journal.db", What: "journal"},
	}
}

// specArg is the document a command reads.
var specArg = command.Arg{Name: "SPEC", Help: "the OpenAPI document (JSON or YAML)", Files: true}

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
	interrupted := func() error {
		return command.Interrupted(fmt.Errorf("interrupted while loading %s (%v)", specPath, context.Cause(ctx)))
	}
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			return nil, nil, interrupted()
		}
		return r.cat, cfg, r.err
	case <-ctx.Done():
		return nil, nil, interrupted()
	}
}

// openDB opens the journal database that --db, $TOOLGATE_DB or the data
// directory names.
func openDB(ctx context.Context, r *command.Run) (*sqlstore.DB, error) {
	dsn, err := r.DSN()
	if err != nil {
		return nil, err
	}
	db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{})
	if err != nil {
		return nil, dbError(dsn, err)
	}
	return db, nil
}
