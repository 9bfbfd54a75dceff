package output

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		args []string
		want string
	}{
		{0, []string{"file"}, "0 files"}, {1, []string{"file"}, "1 file"}, {2, []string{"file"}, "2 files"},
		{1, []string{"tool is", "tools are"}, "1 tool is"}, {3, []string{"tool is", "tools are"}, "3 tools are"},
	} {
		if got := Plural(tt.n, tt.args[0], tt.args[1:]...); got != tt.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tt.n, tt.args, got, tt.want)
		}
	}
}

// TestShellQuote asks a real shell to read each quoted word back.
func TestShellQuote(t *testing.T) {
	for _, s := range []string{"transcribe/ab12/0/openai/whisper-1", "toolgate/createOrder/a:b", "it's", "a b", "$HOME", "`x`", "", `a"b\c`} {
		out, err := exec.Command("sh", "-c", `printf %s `+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q) = %s reads back as %q (%v)", s, ShellQuote(s), out, err)
		}
	}
}

func TestOperationJSON(t *testing.T) {
	op := journal.Operation{Key: "k", Kind: "toolgate", State: journal.Ambiguous, Created: time.Unix(1, 0).UTC(), Updated: time.Unix(2, 0).UTC(),
		Evidence: journal.Evidence{"arguments": `{"sku":"B7"}`, "duration_s": 1.5, "note": "[cut"}}
	b, err := json.Marshal(FromOperation(op, "arguments", "note"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"arguments":{"sku":"B7"}`, `"duration_seconds":1.5`, `"note":"[cut"`, `"key":"k"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	for _, absent := range []string{"lease_expires", "0001-01-01", "resolution", "null"} {
		if strings.Contains(string(b), absent) {
			t.Errorf("%s holds %s", b, absent)
		}
	}
	if b, _ := json.Marshal(FromOperations(nil)); string(b) != "[]" {
		t.Errorf("no operations: %s", b)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1.0 kB", 1_500_000: "1.5 MB", 2_340_000_000: "2.3 GB", 5e12: "5.0 TB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
