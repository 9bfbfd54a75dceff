// Package cli is recall-archive's command line: one command per file, on
// the skeleton both products share (internal/command), over package
// recall.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// Exit codes, documented in the help.
const (
	ExitOK = command.ExitOK
	// ExitFailure: the command could not do its job.
	ExitFailure = command.ExitFailure
	// ExitUsage: the command line was wrong.
	ExitUsage = command.ExitUsage
	// ExitAmbiguous: the command finished, and some items are ambiguous:
	// they may have been paid for, and need a person or a reconciliation.
	ExitAmbiguous = 3
	// ExitItemProblems: the command finished, and some items failed, were
	// rejected, were refused by the batch's budget or were left because
	// other settings transcribed them; the others went through.
	ExitItemProblems = 4
)

// DBEnv names the environment variable that selects the database when
// --db is not given.
const DBEnv = "RECALL_DB"

// Env is what a command sees of the world.
type Env struct {
	// Stdin answers the questions a command asks (retranscribe's
	// confirmation); nil answers nothing.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Options open the archive; tests point them at their own tools.
	Options recall.Options
}

// Main runs recall-archive with args (without the program name) and returns
// the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	return program(env).Main(ctx, args, command.Env{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Getenv: env.Getenv})
}

// program is recall-archive's command line, made anew for each run.
func program(env Env) *command.Program {
	o := env.Options
	return &command.Program{
		Name: "recall-archive",
		Intro: `recall-archive transcribes a folder of recordings through a paid speech-to-text
API, and never pays twice for the same recording.`,
		More: `The database is a SQLite file (default: recall.db in the user's data
directory; $` + DBEnv + ` overrides it, and --db overrides both), or a
postgres:// DSN for several workers on several machines. --db and --json
may come before the command. Every command takes --json.`,
		Commands: []*command.Command{addCommand(o), batchesCommand(o), estimateCommand(o), runCommand(o), watchCommand(o), retranscribeCommand(o), budgetCommand(o), statusCommand(o), retryFailedCommand(o),
			ambiguousCommand(o), resolveCommand(o), reconcileCommand(o), searchCommand(o), speakersCommand(o), exportCommand(o), removeCommand(o), cacheCommand(o), consoleCommand(o), sandboxCommand()},
		ExitCodes: []command.ExitCode{
			{Code: ExitAmbiguous, Meaning: "done, with ambiguous items (they may have been paid for: see 'recall-archive ambiguous')"},
			{Code: ExitItemProblems, Meaning: "done, with items that failed, were rejected, were refused by the budget or were transcribed with other settings (listed in the output)"},
			{Code: command.ExitInterrupted, Meaning: "interrupted (Ctrl-C or SIGTERM) with items still waiting: run again to go on"},
		},
		DB: command.Database{Env: DBEnv, File: "recall.db", What: "database"},
	}
}

// batchArg is the batch a command works on.
var batchArg = command.Arg{Name: "BATCH", Help: "the name of the batch", Complete: completeBatches}

// archived is a command's work on the archive that --db names, opened
// for it and closed after. An archive that cannot be written (a read-only
// file or directory) is opened read-only: a command that only reads it
// works, and one that changes it fails at its first change, saying so.
func archived(o recall.Options, do func(ctx context.Context, r *command.Run, a *recall.Archive) error) func(context.Context, *command.Run) error {
	return func(ctx context.Context, r *command.Run) error {
		dsn, err := r.DSN()
		if err != nil {
			return err
		}
		a, err := recall.Open(ctx, dsn, o)
		if errors.Is(err, sqlstore.ErrNotWritable) {
			o.ReadOnly = true
			a, err = recall.Open(ctx, dsn, o)
		}
		if err != nil {
			return err
		}
		defer a.Close()
		return do(ctx, r, a)
	}
}

func printProblems(w io.Writer, ps []recall.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "problems (%d):\n", len(ps))
	for _, p := range ps {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", p.State, strconv.Quote(p.Path), p.Error)
	}
}
