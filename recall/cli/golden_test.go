package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
)

// TestHelpOfTheListingCommands compares the help of the commands that
// list and tidy an archive with testdata/help/COMMAND.txt, so that a
// change of what they promise shows in review. go test -run
// TestHelpOfTheListingCommands -update rewrites the files.
func TestHelpOfTheListingCommands(t *testing.T) {
	for _, name := range []string{"batches", "search", "speakers", "export", "remove", "cache"} {
		r := run(t, nil, "help", name)
		path := filepath.Join("testdata", "help", name+".txt")
		if doccheck.Update() {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestHelpOfTheListingCommands -update writes it)", err)
		}
		if r.stdout != string(want) {
			t.Errorf("help %s differs from %s (go test -run TestHelpOfTheListingCommands -update rewrites it):\n%s", name, path, r.stdout)
		}
	}
}
