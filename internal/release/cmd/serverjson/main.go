// Command serverjson prints toolgate's MCP registry entry for a release:
//
//	go run ./internal/release/cmd/serverjson v1.2.3 > dist/server.json
package main

import (
	"fmt"
	"os"

	"github.com/rubicon-go/rubicon/internal/release"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: serverjson VERSION")
		os.Exit(2)
	}
	b, err := release.ServerJSON(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
