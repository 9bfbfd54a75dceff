package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/cli"
)

// inspect shows what loading changed in the document's schemas.
func TestInspectShowsNotes(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "patterns.yaml")
	os.WriteFile(doc, []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /tags:
    post:
      operationId: addTag
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Tag'}
      responses: {"201": {description: ok}}
components:
  schemas:
    Tag:
      type: object
      properties:
        name: {type: string, pattern: '^[a-zA-Z0-9_\-\:]+$'}
`), 0o600)
	code, out, errOut := run("inspect", doc)
	want := `note: #/components/schemas/Tag/properties/name: the pattern "^[a-zA-Z0-9_\\-\\:]+$" is not an ECMAScript regular expression (invalid class escape): dropped`
	if code != cli.ExitOK || !strings.Contains(out, want) {
		t.Errorf("exit %d, %s\n%s; want %s", code, errOut, out, want)
	}
	code, out, _ = run("inspect", "--json", doc)
	var got struct{ Summary struct{ Notes []string } }
	if err := json.Unmarshal([]byte(out), &got); code != cli.ExitOK || err != nil || len(got.Summary.Notes) != 1 {
		t.Errorf("exit %d, %v: %s", code, err, out)
	}
}

// A command interrupted while it loads the document stops, says so, and
// exits with ExitInterrupted.
func TestInterruptedWhileLoading(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	const shop = "../../examples/shop/openapi.yaml"
	for _, args := range [][]string{{"inspect", shop}, {"serve", shop, "--stdio", "--upstream", "http://127.0.0.1:1"}} {
		var out, errOut bytes.Buffer
		code := cli.Main(ctx, args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
		want := "toolgate " + args[0] + ": interrupted while loading " + shop + " (interrupt signal received)\n"
		if code != cli.ExitInterrupted || errOut.String() != want || out.Len() > 0 {
			t.Errorf("%s: exit %d, %q, %q; want %d, %q", args[0], code, errOut.String(), out.String(), cli.ExitInterrupted, want)
		}
	}
}
