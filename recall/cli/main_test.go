package cli_test

import (
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

// The tests that run the real program build it once.
func TestMain(m *testing.M) { testkit.Main(m) }
