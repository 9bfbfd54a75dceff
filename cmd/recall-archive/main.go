// Command recall-archive transcribes a folder of recordings through a paid
// speech-to-text API, and never pays twice for the same recording. Run
// "recall-archive help" for its commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rubicon-go/rubicon/recall/cli"
)

func main() {
	// The first Ctrl-C stops new work and lets requests in flight finish;
	// a second one ends the process at once, which the next run recovers
	// from (its requests in flight become ambiguous, never resent).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
