// Command example is a program with a resolve command, for the tests that
// complete its command lines in a shell.
package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
)

func main() {
	var rule command.Resolve
	p := &command.Program{Name: "example", Commands: []*command.Command{{Name: "resolve", Summary: "settle",
		Args:  []command.Arg{{Name: "KEY", Help: "the key"}},
		Flags: func(f *pflag.FlagSet) { rule.Flags(f, "it was", "it was not") },
		Run:   func(context.Context, *command.Run) error { return nil }}}}
	os.Exit(p.Main(context.Background(), os.Args[1:], command.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
