// Command toolgate turns an OpenAPI document into an MCP tool server for
// LLM agents, safe by default. Run "toolgate help" for its commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rubicon-go/rubicon/toolgate/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
