// Command testworker is sqlstore's test worker process.
package main

import (
	"os"

	"github.com/rubicon-go/rubicon/sqlstore/internal/testworker"
)

func main() { os.Exit(testworker.Main()) }
