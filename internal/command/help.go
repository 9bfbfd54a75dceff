package command

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/version"
)

// programHelp writes the program's help: what it is, its commands, what
// they share and the exit codes.
func (p *Program) programHelp(w io.Writer, cmds []*Command) {
	fmt.Fprintf(w, "%s\n\nusage: %s COMMAND [arguments] [flags]\n\ncommands:\n", strings.TrimSpace(p.Intro), p.Name)
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-13s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nRun '%s help COMMAND', or '%s COMMAND --help', for a command's arguments and flags.\n", p.Name, p.Name)
	if p.More != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(p.More))
	}
	p.exitCodes(w)
}

// commandHelp writes c's help, with its flags f: its usage line, what it
// does, its flags and the exit codes.
func (p *Program) commandHelp(w io.Writer, c *Command, f *pflag.FlagSet) {
	fmt.Fprintf(w, "usage: %s %s %s\n\n%s.\n", p.Name, c.Name, c.synopsis(), capitalize(c.Summary))
	if c.Help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Help))
	}
	fmt.Fprint(w, "\nflags:\n")
	var names, usages []string
	width := 0
	f.VisitAll(func(fl *pflag.Flag) {
		name, usage := pflag.UnquoteUsage(fl)
		text := "--" + fl.Name
		if fl.Shorthand != "" {
			text = "-" + fl.Shorthand + ", " + text
		}
		if fl.Value.Type() != "bool" {
			text += " " + valueName(name)
		}
		if d := fl.DefValue; d != "" && d != "0" && d != "false" && d != "[]" && d != "0s" && !strings.Contains(usage, "default") {
			usage += " (default " + d + ")"
		}
		names, usages, width = append(names, text), append(usages, usage), max(width, len(text))
	})
	for i := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, names[i], usages[i])
	}
	p.exitCodes(w)
}

// synopsis is what follows c's name in its usage line.
func (c *Command) synopsis() string {
	if c.Synopsis != "" {
		return c.Synopsis
	}
	var words []string
	for _, a := range c.Args {
		w := a.Name
		if a.Many {
			w += "..."
		}
		if a.Optional {
			w = "[" + w + "]"
		}
		words = append(words, w)
	}
	return strings.Join(append(words, "[flags]"), " ")
}

// valueName is how the help names a flag's value: as its usage names it
// between backquotes, else by its type.
func valueName(name string) string {
	switch name {
	case "string", "stringArray", "stringSlice":
		return "VALUE"
	case "int", "int64", "uint", "float64":
		return "N"
	}
	return strings.ToUpper(name)
}

func (p *Program) exitCodes(w io.Writer) {
	codes := append([]ExitCode{
		{ExitOK, "done"},
		{ExitFailure, "failure: the command could not do its job"},
		{ExitUsage, "usage: the command line was wrong"},
	}, p.ExitCodes...)
	width := 1
	for _, c := range codes {
		width = max(width, len(fmt.Sprint(c.Code)))
	}
	fmt.Fprint(w, "\nexit codes:\n")
	for _, c := range codes {
		fmt.Fprintf(w, "  %*d  %s\n", width, c.Code, c.Meaning)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// helpCommand is "help [COMMAND]": the program's help, or a command's,
// the same as "COMMAND --help".
func (p *Program) helpCommand(root *cobra.Command) *Command {
	return &Command{Name: "help", Args: []Arg{{Name: "COMMAND", Optional: true}},
		Summary: "show the program's help, or a command's (the same as COMMAND --help)",
		Run: func(_ context.Context, r *Run) error {
			c, _, err := root.Find(r.Args)
			if err != nil || (c == root && len(r.Args) > 0) {
				return Usagef("unknown command %q", r.Args[0])
			}
			c.SetOut(r.Stdout)
			c.HelpFunc()(c, nil)
			return nil
		}}
}

// versionCommand is "version" (and --version): which build this is.
func (p *Program) versionCommand() *Command {
	return &Command{Name: "version", JSON: true,
		Summary: "print the version of this build: module version, commit, Go version (the same as --version)",
		Run: func(_ context.Context, r *Run) error {
			info := version.Get()
			r.Show(info, func(w io.Writer) { fmt.Fprintln(w, p.Name, info) })
			return nil
		}}
}

// completionCommand is "completion SHELL": the script that completes the
// program's commands and flags in bash, zsh or fish.
func (p *Program) completionCommand(root *cobra.Command) *Command {
	return &Command{Name: "completion", Args: []Arg{{Name: "SHELL", Help: "bash, zsh or fish"}},
		Summary: "print the script that completes commands and flags in bash, zsh or fish",
		Help: fmt.Sprintf(`To load it in the running shell:
  bash:  source <(%[1]s completion bash)
  zsh:   source <(%[1]s completion zsh)
  fish:  %[1]s completion fish | source
To load it in every new shell, write it where the shell looks for completions,
such as /etc/bash_completion.d/%[1]s, a directory of $fpath as _%[1]s, or
~/.config/fish/completions/%[1]s.fish.`, p.Name),
		Run: func(_ context.Context, r *Run) error {
			switch r.Args[0] {
			case "bash":
				return root.GenBashCompletionV2(r.Stdout, true)
			case "zsh":
				return root.GenZshCompletion(r.Stdout)
			case "fish":
				return root.GenFishCompletion(r.Stdout, true)
			}
			return Usagef("no completion for %q: give bash, zsh or fish", r.Args[0])
		}}
}
