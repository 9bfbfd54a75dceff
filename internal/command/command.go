// Package command is the skeleton that both products' command lines
// share: a program is a list of commands, each in a file of its own with
// its flags, arguments and help; --db with the product's environment
// variable and default location; --json; help that reads the same as
// "help COMMAND" and as "COMMAND --help"; usage errors (exit 2) apart from
// failures (exit 1) and the product's own exit codes; every error printed
// once, as it is written, after the command's name; and shell completion
// for bash, zsh and fish.
//
// It is built on github.com/spf13/cobra, which parses the flags (before,
// between or after the arguments; "--" ends them) and generates the
// completion scripts.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes every program shares; a program documents its own beside
// them ([Program.ExitCodes]).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitInterrupted: a signal (SIGINT or SIGTERM) stopped the command
	// before it could do its work; 128 + SIGINT, as shells say.
	ExitInterrupted = 130
)

// Program is a command-line program: its name, what it is, and its
// commands.
type Program struct {
	Name string
	// Intro opens the program's help: what it is, in a paragraph.
	Intro string
	// More closes the program's help: what the commands share.
	More     string
	Commands []*Command
	// ExitCodes documents the program's own exit codes, past 0, 1 and 2.
	ExitCodes []ExitCode
	// DB says where --db points when it is not given.
	DB Database
}

// ExitCode is an exit code and what it means.
type ExitCode struct {
	Code    int
	Meaning string
}

// Database is where a program keeps its database: the environment
// variable that names it, else File in the program's directory of the
// user's data directory ($XDG_DATA_HOME, else ~/.local/share).
type Database struct {
	Env  string // "TOOLGATE_DB"
	File string // "journal.db"
	What string // "journal", in messages and help
}

// Command is one command of a program.
type Command struct {
	Name string
	// Args are the command's arguments, checked before it runs.
	Args []Arg
	// Synopsis follows the command's name in its usage line; by default,
	// its arguments and "[flags]".
	Synopsis string
	// Summary says what the command does, in a line without a period.
	Summary string
	// Help says more, in paragraphs after the summary.
	Help string
	// DB and JSON give the command --db and --json.
	DB, JSON bool
	// Flags declares the command's own flags.
	Flags func(f *pflag.FlagSet)
	// FlagValues, if set, lists by flag name what the shell may complete
	// the flag's value with, as [Arg.Complete] does.
	FlagValues map[string]func(ctx context.Context, r *Run) ([]string, error)
	// Check, if set, checks what the flags say before Run opens or reads
	// anything; it returns a usage error ([Usagef]) or nil.
	Check func(r *Run) error
	// Run does the command's work. An error made by [Usagef] is a usage
	// error (exit 2, with the usage); one made by [Exit] ends with its
	// code and says nothing; any other is a failure (exit 1).
	Run func(ctx context.Context, r *Run) error
}

// Arg is a command's argument.
type Arg struct {
	Name string // "SPEC"
	// Help says what it is, after "give NAME, ": "the OpenAPI document".
	Help     string
	Optional bool
	// Many: the argument may be given several times.
	Many bool
	// Files: the shell completes it with file names.
	Files bool
	// Complete, if set, lists what the shell may complete the argument
	// with (batch names, from the database that --db names); an error
	// completes nothing.
	Complete func(ctx context.Context, r *Run) ([]string, error)
}

// Env is what a program sees of the world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
}

// Run is one run of a command: its arguments and flags, and the world.
type Run struct {
	Env
	// Args are the arguments, checked against the command's.
	Args []string
	// JSON: --json was given.
	JSON bool
	db   string
	prog *Program
	cmd  *Command
}

// usageError is a misuse of the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Usagef returns a usage error: the command line was wrong. It is
// printed on one line, followed by where to read the command's usage, and
// ends the command with exit 2.
func Usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitError ends a command with a code, saying nothing more.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// interruptedError is work that a signal stopped.
type interruptedError struct{ err error }

func (e *interruptedError) Error() string { return e.err.Error() }
func (e *interruptedError) Unwrap() error { return e.err }

// Interrupted returns err, the error of work that a signal stopped, such
// that it is printed as any failure and ends the command with
// ExitInterrupted.
func Interrupted(err error) error { return &interruptedError{err} }

// Exit returns an error that ends the command with code, once the
// command has said what it did: a product's own codes, such as "done,
// with ambiguous items". Exit(0) is nil.
func Exit(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code}
}

// Main runs p with args (without the program's name) and returns the
// exit code.
func (p *Program) Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	root := p.tree(env)
	args, err := p.arrange(root, args)
	if err != nil {
		return p.report(root, env, err)
	}
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	return p.report(c, env, err)
}

// report prints err, if any, after the command c's name and as it is
// written, and returns the exit code it ends with.
func (p *Program) report(c *cobra.Command, env Env, err error) int {
	var ue *usageError
	var ee *exitError
	var ie *interruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ie):
		fmt.Fprintf(env.Stderr, "%s: %v\n", c.CommandPath(), err)
		return ExitInterrupted
	case errors.As(err, &ue):
		// What was wrong, and where to read more: the whole help would
		// push the one line that matters off the screen.
		fmt.Fprintf(env.Stderr, "%s: %s\nRun '%s --help' for usage.\n", c.CommandPath(), ue.msg, c.CommandPath())
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "%s: %v\n", c.CommandPath(), err)
	return ExitFailure
}

// tree builds the program's commands for one run.
func (p *Program) tree(env Env) *cobra.Command {
	root := &cobra.Command{Use: p.Name, SilenceErrors: true, SilenceUsage: true, Args: cobra.NoArgs,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true}}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usagef("%s", flagError(err)) })
	help, completion, version := p.helpCommand(root), p.completionCommand(root), p.versionCommand()
	cmds := map[string]*Command{help.Name: help, completion.Name: completion, version.Name: version}
	for _, c := range p.Commands {
		cmds[c.Name] = c
		root.AddCommand(p.cobra(c, env))
	}
	root.AddCommand(p.cobra(completion, env))
	root.AddCommand(p.cobra(version, env))
	root.SetHelpCommand(p.cobra(help, env))
	root.InitDefaultHelpCmd() // now, so that arrange finds it
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			p.programHelp(c.OutOrStdout(), append(p.Commands, completion, version, help))
			return
		}
		p.commandHelp(c.OutOrStdout(), cmds[c.Name()], c.Flags())
	})
	return root
}

// cobra makes the cobra command that runs c.
func (p *Program) cobra(c *Command, env Env) *cobra.Command {
	r := &Run{Env: env, prog: p, cmd: c}
	cc := &cobra.Command{Use: c.Name, Short: c.Summary,
		Args: func(_ *cobra.Command, args []string) error { return c.check(p.Name, args) },
		RunE: func(cc *cobra.Command, args []string) error {
			r.Args = args
			if c.Check != nil {
				if err := c.Check(r); err != nil {
					return err
				}
			}
			return c.Run(cc.Context(), r)
		},
		ValidArgsFunction: func(cc *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if a := c.arg(len(args)); a != nil && a.Complete != nil {
				words, err := a.Complete(cc.Context(), r)
				if err != nil {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return words, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, c.complete(len(args))
		},
	}
	f := cc.Flags()
	f.SortFlags = true
	if c.DB {
		f.StringVar(&r.db, "db", "", fmt.Sprintf("the %s: a SQLite file, or a postgres:// `DSN` (default: $%s, else %s in the data directory)", p.DB.What, p.DB.Env, p.DB.File))
	}
	if c.JSON {
		f.BoolVar(&r.JSON, "json", false, "print machine-readable JSON")
	}
	if c.Flags != nil {
		c.Flags(f)
	}
	for name, values := range c.FlagValues {
		cc.RegisterFlagCompletionFunc(name, func(cc *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			words, _ := values(cc.Context(), r) // an error completes nothing
			return words, cobra.ShellCompDirectiveNoFileComp
		})
	}
	f.VisitAll(func(fl *pflag.Flag) {
		if words, ok := fl.Annotations[wordsAnnotation]; ok {
			cc.RegisterFlagCompletionFunc(fl.Name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	f.BoolP("help", "h", false, "show this help")
	return cc
}

// check checks the arguments args against c's.
func (c *Command) check(prog string, args []string) error {
	min, max := 0, len(c.Args)
	for _, a := range c.Args {
		if !a.Optional {
			min++
		}
		if a.Many {
			max = -1
		}
	}
	switch {
	case len(args) < min:
		a := c.Args[len(args)]
		return Usagef("give %s, %s", a.Name, a.Help)
	case max >= 0 && len(args) > max && max == 0:
		return Usagef("unexpected argument %q: %s %s takes none", args[0], prog, c.Name)
	case max >= 0 && len(args) > max:
		names := make([]string, len(c.Args))
		for i, a := range c.Args {
			names[i] = a.Name
		}
		return Usagef("unexpected argument %q after %s", args[max], strings.Join(names, " "))
	}
	return nil
}

// wordsAnnotation marks a flag's values for the shell to complete.
const wordsAnnotation = "rubicon_words"

// CompleteWith has the shell complete the value of the flag name of f
// with words, such as the providers that --provider takes.
func CompleteWith(f *pflag.FlagSet, name string, words ...string) {
	f.SetAnnotation(name, wordsAnnotation, words)
}

// arg returns the argument at index i, nil past the last.
func (c *Command) arg(i int) *Arg {
	if n := len(c.Args); n > 0 && (i < n || c.Args[n-1].Many) {
		return &c.Args[min(i, n-1)]
	}
	return nil
}

// complete says how the shell completes the argument at index i.
func (c *Command) complete(i int) cobra.ShellCompDirective {
	if n := len(c.Args); n > 0 && (i < n || c.Args[n-1].Many) && c.Args[min(i, n-1)].Files {
		return cobra.ShellCompDirectiveDefault
	}
	return cobra.ShellCompDirectiveNoFileComp
}

// DSN returns the database that --db, the program's environment variable
// or the user's data directory names, creating that directory if need be.
func (r *Run) DSN() (string, error) {
	db := r.prog.DB
	if r.db != "" {
		return r.db, nil
	}
	if dsn := r.Getenv(db.Env); dsn != "" {
		return dsn, nil
	}
	dir := r.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home := r.Getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("no home directory to keep the %s in: give --db or $%s", db.What, db.Env)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	dir = filepath.Join(dir, r.prog.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create the data directory %s: %w", dir, err)
	}
	return filepath.Join(dir, db.File), nil
}

// Done ends a command whose work returned v or err: err as it is, else
// v shown, as [Run.Show] does.
func (r *Run) Done(v any, err error, text func(w io.Writer)) error {
	if err != nil {
		return err
	}
	r.Show(v, text)
	return nil
}

// Show prints v as JSON with --json, else as text writes it.
func (r *Run) Show(v any, text func(w io.Writer)) {
	if !r.JSON {
		text(r.Stdout)
		return
	}
	enc := json.NewEncoder(r.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// Logf writes a line to standard error, after the program's name: what a
// long-running command says as it goes.
func (r *Run) Logf(format string, args ...any) {
	fmt.Fprintf(r.Stderr, "%s: %s\n", r.prog.Name, fmt.Sprintf(format, args...))
}

// arrange readies args for cobra. The flags every command shares (--db,
// --json) may come before the command's name, and go after it; a long
// flag written with one dash, as Go's flag package takes it (-db), gets
// two; help asked for at the start is the program's help.
func (p *Program) arrange(root *cobra.Command, args []string) ([]string, error) {
	var shared []string
	wantVersion := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" && args[0] != "--" {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch {
		case name == "h" || name == "help":
			return []string{"help"}, nil
		case name == "version":
			wantVersion, args = true, args[1:]
		case name == "json":
			shared, args = append(shared, "--"+strings.TrimLeft(args[0], "-")), args[1:]
		case name == "db" && hasValue:
			shared, args = append(shared, "--db="+value), args[1:]
		case name == "db" && len(args) > 1:
			shared, args = append(shared, "--db="+args[1]), args[2:]
		case name == "db":
			return nil, Usagef("--db needs a value")
		default:
			return nil, Usagef("unknown flag --%s", name)
		}
	}
	if wantVersion {
		return append([]string{"version"}, shared...), nil
	}
	if len(args) == 0 {
		return nil, Usagef("give a command")
	}
	if strings.HasPrefix(args[0], "__complete") {
		return args, nil // the shell's completion asks with the words as typed
	}
	c, _, err := root.Find(args[:1])
	if err != nil || c == root {
		return nil, Usagef("unknown command %q", args[0])
	}
	return append(append([]string{args[0]}, shared...), doubleDash(c.Flags(), args[1:])...), nil
}

// doubleDash gives two dashes to the long flags of f written with one,
// up to "--" and never in a flag's value.
func doubleDash(f *pflag.FlagSet, args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") || len(a) < 3 {
			continue
		}
		name, _, hasValue := strings.Cut(a[1:], "=")
		fl := f.Lookup(name)
		if fl == nil {
			continue
		}
		out[i] = "-" + a
		if !hasValue && fl.NoOptDefVal == "" {
			i++ // its value follows
		}
	}
	return out
}

// ExitCodeOf returns the code that err, returned by a command's work,
// ends the program with, when err is one of Exit's.
func ExitCodeOf(err error) (int, bool) {
	var e *exitError
	if errors.As(err, &e) {
		return e.code, true
	}
	return 0, false
}
