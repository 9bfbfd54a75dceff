// Package concurrency_test runs several `recall-archive run` processes at
// once on one batch, on SQLite and on PostgreSQL, and checks them against
// the provider's own count; it also measures what their coordination
// costs. It is a package of its own so that its real processes have a
// test timeout of their own.
package concurrency_test

import (
	"os/exec"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// The tests run recall-archive, built once.
func TestMain(m *testing.M) { testkit.Main(m) }

// exitCode is the exit code of a process that ended with err.
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
