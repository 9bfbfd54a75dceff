package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/toolgate/cli"
)

func run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	return code, out.String(), errOut.String()
}

func TestInspectTable(t *testing.T) {
	code, out, errOut := run("inspect", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"TOOL", "RISK", "REVIEW", "EXPOSED", "RETRY", "DEADLINE",
		"deleteOrder", "destructive", "hidden: destructive tools are never exposed by default; enable this one with tools.deleteOrder.expose: true",
		"exposed by defaults.expose: read+write",
		"listApiKeys", "privileged", `it reads credentials, which is privileged too ("api-keys" in the path)`,
		"createOrder", "only if not sent (ambiguous otherwise)",
		"7 tools: 2 read, 2 write, 2 destructive, 1 privileged; 4 exposed",
		"tools/list:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectJSONWithConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolgate.yaml")
	os.WriteFile(cfg, []byte("upstream:\n  auth: {type: none}\ntools:\n  refundOrder:\n    expose: true\n    retry: opted_in\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, "--json", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	schematest.Check(t, "toolgate/inspect.json", []byte(out))
	var got struct {
		Summary struct {
			Exposed  int      `json:"exposed"`
			Warnings []string `json:"warnings"`
		}
		Tools []struct {
			Name, Retry, Exposure string
			Exposed               bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Summary.Exposed != 5 || len(got.Summary.Warnings) != 1 || !strings.Contains(got.Summary.Warnings[0], "refundOrder") {
		t.Fatalf("summary %+v", got.Summary)
	}
	for _, tl := range got.Tools {
		if tl.Name == "refundOrder" && (!tl.Exposed || !strings.Contains(tl.Retry, "Idempotency-Key")) {
			t.Fatalf("refundOrder %+v", tl)
		}
	}
}

// TestInspectConfirm checks that inspect shows the tools a person
// confirms call by call.
func TestInspectConfirm(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "toolgate.yaml")
	os.WriteFile(cfg, []byte("tools:\n  refundOrder:\n    expose: confirm\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := regexp.MustCompile(`(?m)^refundOrder .*$`).FindString(out)
	if !regexp.MustCompile(`destructive\s+confirm\s+MISSING: oauth\s+only if not sent`).MatchString(row) ||
		!strings.Contains(row, "enabled by tools.refundOrder.expose: confirm: a person accepts each call") {
		t.Errorf("refundOrder's row: %q", row)
	}
	for _, want := range []string{"5 exposed (2 read, 2 write, 1 destructive, 0 privileged; 1 confirmed by a person call by call)",
		"\nscheme oauth: OAuth2 (client credentials); nothing; write upstream.schemes.oauth: {type: oauth2, client_id: CLIENT_ID, env: OAUTH_CLIENT_SECRET}\n",
		"\nwarning: 5 exposed tools require oauth (OAuth2 (client credentials)), and the configuration gives nothing"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = run("inspect", "--config", cfg, "--json", "../../examples/shop/openapi.yaml")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Summary struct{ Confirm int }
		Tools   []struct {
			Name             string
			Exposed, Confirm bool
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Summary.Confirm != 1 {
		t.Errorf("summary: %d confirmed, want 1", got.Summary.Confirm)
	}
	for _, tl := range got.Tools {
		if tl.Confirm != (tl.Name == "refundOrder") || tl.Name == "refundOrder" && !tl.Exposed {
			t.Errorf("%+v", tl)
		}
	}
}

// TestInspectReviewAndRules checks that inspect shows the tools to review
// first, why, and which rule decided each tool's exposure.
func TestInspectReviewAndRules(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "gists.json")
	os.WriteFile(doc, []byte(`{"openapi": "3.0.0", "paths": {
	  "/gists/{id}": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "get": {"operationId": "getGist", "summary": "Get a gist", "responses": {}},
	    "patch": {"operationId": "updateGist", "summary": "Update a gist",
	      "description": "Allows you to update a gist's description and to update, delete, or rename gist files.", "responses": {}}}}}`), 0o644)
	cfg := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(cfg, []byte("defaults: {expose: read}\n"), 0o644)
	code, out, errOut := run("inspect", "--config", cfg, doc)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"REVIEW", "review", `REVIEW: its description speaks of "delete", its name does not: is it more than a write?`,
		"hidden by defaults.expose: read (a write tool)", "exposed by defaults.expose: read",
		"review first: 1 tool where the evidence about the class disagrees: updateGist",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = run("inspect", "--config", cfg, "--json", doc)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Summary struct{ Review []string }
		Tools   []struct {
			Name          string
			Review        bool
			ReviewReasons []string `json:"review_reasons"`
			ExposureRule  string   `json:"exposure_rule"`
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Summary.Review) != 1 || got.Summary.Review[0] != "updateGist" {
		t.Errorf("summary review %v", got.Summary.Review)
	}
	for _, tl := range got.Tools {
		if tl.Review != (tl.Name == "updateGist") || tl.Review != (len(tl.ReviewReasons) > 0) || tl.ExposureRule != "defaults.expose" {
			t.Errorf("%+v", tl)
		}
	}
}

func TestInspectErrors(t *testing.T) {
	if code, _, _ := run(); code != cli.ExitUsage {
		t.Errorf("no command: exit %d", code)
	}
	if code, _, _ := run("inspect"); code != cli.ExitUsage {
		t.Errorf("no spec: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\"openapi\": \"3.0.0\",\n \"paths\": {,}}"), 0o644)
	code, _, errOut := run("inspect", bad)
	if code != cli.ExitFailure || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, bad) {
		t.Errorf("a malformed spec: exit %d, %q", code, errOut)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("tools:\n  nope:\n    expose: true\n"), 0o644)
	if code, _, errOut := run("inspect", "--config", cfg, "../../examples/shop/openapi.yaml"); code != cli.ExitFailure || !strings.Contains(errOut, "nope") {
		t.Errorf("a config naming no tool: exit %d, %q", code, errOut)
	}
}

// Every error a person can provoke from the command line says, in one
// line after the command's prefix, what is wrong and what to do; never
// with a package's prefix, a Go type or a secret.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const shop = "../../examples/shop/openapi.yaml"
	db := filepath.Join(dir, "journal.db")
	badBool := file("bad-bool.yaml", "tools:\n  createOrder:\n    expose: maybe\n")
	unknownTool := file("unknown-tool.yaml", "tools:\n  nope:\n    expose: true\n")
	needsSecret := file("needs-secret.yaml", "upstream:\n  auth: {type: bearer, env: SHOP_SECRET}\n")
	noPaths := file("no-paths.yaml", "openapi: 3.0.0\npaths: {}\n")
	noServers := file("no-servers.yaml", "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses: {}\n")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// The example shop checks no credentials: its configuration says so.
	upstream := []string{"--upstream", "http://127.0.0.1:1", "--config", "../../examples/shop/toolgate.yaml"}

	for _, c := range []struct {
		args []string
		code int
		want string // the first line of standard error contains this
	}{
		{[]string{"bogus"}, cli.ExitUsage, `toolgate: unknown command "bogus"`},
		{[]string{"inspect"}, cli.ExitUsage, "toolgate inspect: give SPEC, the OpenAPI document (JSON or YAML)"},
		{[]string{"inspect", shop, "extra"}, cli.ExitUsage, `toolgate inspect: unexpected argument "extra" after SPEC`},
		{[]string{"inspect", "--bogus", shop}, cli.ExitUsage, "toolgate inspect: unknown flag --bogus"},
		{[]string{"inspect", "--json=maybe", shop}, cli.ExitUsage, `toolgate inspect: --json is "maybe"; give true or false, or leave the value out for true`},
		{[]string{"inspect", shop, "--config"}, cli.ExitUsage, "toolgate inspect: --config needs a value"},
		{[]string{"inspect", filepath.Join(dir, "missing.yaml")}, cli.ExitFailure,
			"toolgate inspect: cannot read the document " + filepath.Join(dir, "missing.yaml") + ": no such file"},
		{[]string{"inspect", dir}, cli.ExitFailure, "toolgate inspect: cannot read the document " + dir + ": it is a directory, not a file"},
		{[]string{"inspect", noPaths}, cli.ExitFailure, "toolgate inspect: " + noPaths + ": the document has no paths"},
		{[]string{"inspect", shop, "--config", filepath.Join(dir, "missing.yaml")}, cli.ExitFailure,
			"toolgate inspect: " + filepath.Join(dir, "missing.yaml") + ": cannot read the configuration: no such file"},
		{[]string{"inspect", shop, "--config", badBool}, cli.ExitFailure,
			"toolgate inspect: " + badBool + `, line 3: tools.createOrder.expose is "maybe"; a tool rule takes true (show this tool, whatever its class), confirm (show it, and have a person accept each call before it is sent) or false (hide it)`},
		{[]string{"inspect", shop, "--config", unknownTool}, cli.ExitFailure, `toolgate inspect: the configuration names tool "nope"`},
		{[]string{"serve", shop}, cli.ExitUsage, "toolgate serve: give either --stdio or --http ADDR"},
		{[]string{"serve", shop, "--stdio", "--http", "8080"}, cli.ExitUsage, "toolgate serve: give either --stdio or --http ADDR"},
		{[]string{"serve", shop, "--stdio", "--mode", "fast"}, cli.ExitUsage, `toolgate serve: --mode is "fast"; give tools (one tool per operation), search`},
		{[]string{"serve", shop, "--http", "abc"}, cli.ExitUsage,
			"toolgate serve: --http abc: give a port, such as 8080, or host:port, such as 127.0.0.1:8080"},
		{[]string{"serve", shop, "--http", "127.0.0.1:99999"}, cli.ExitUsage, "toolgate serve: --http 127.0.0.1:99999: give a port"},
		{append([]string{"serve", shop, "--http", busy.Addr().String(), "--db", db}, upstream...), cli.ExitFailure,
			"toolgate serve: " + busy.Addr().String() + " is already in use by another program: stop it, or give another port with --http"},
		{append([]string{"serve", shop, "--http", "0.0.0.0:0", "--db", db}, upstream...), cli.ExitFailure,
			"toolgate serve: listening on an address other than loopback requires a bearer token in $TOOLGATE_TOKEN"},
		{append([]string{"serve", shop, "--http", "127.0.0.1:0", "--db", db, "--allow-origin", "null"}, upstream...), cli.ExitFailure,
			`toolgate serve: allowed origin "null": null is the origin of every local file`},
		{[]string{"serve", shop, "--stdio", "--db", db, "--config", "../../examples/shop/toolgate.yaml", "--upstream", "ftp://x"}, cli.ExitFailure,
			`toolgate serve: upstream "ftp://x": give an http or https URL`},
		{[]string{"serve", noServers, "--stdio", "--db", db}, cli.ExitFailure, "toolgate serve: the document names no server: give --upstream URL"},
		{[]string{"serve", shop, "--stdio", "--db", db, "--upstream", "http://127.0.0.1:1"}, cli.ExitFailure,
			"toolgate serve: the document requires credentials that the configuration does not give: oauth (OAuth2 (client credentials)), for 4 exposed tools (createOrder, getCategory, getOrder and 1 more)"},
		{[]string{"serve", shop, "--stdio", "--db", db, "--config", needsSecret, "--upstream", "http://127.0.0.1:1"}, cli.ExitFailure,
			"toolgate serve: upstream.auth needs $SHOP_SECRET, which is not set"},
		{append([]string{"serve", shop, "--stdio", "--db", "postgres://u:secret@127.0.0.1:1/x"}, upstream...), cli.ExitFailure,
			"toolgate serve: cannot open the journal postgres://u:xxxxx@127.0.0.1:1/x: nothing accepts connections there; is PostgreSQL running"},
		{append([]string{"serve", shop, "--stdio", "--db", "postgres://u:secret@h/%zz"}, upstream...), cli.ExitFailure,
			"toolgate serve: the journal's address postgres://u:xxxxx@h/%zz is not a PostgreSQL URL; give postgres://USER@HOST:PORT/DATABASE"},
		{append([]string{"serve", shop, "--stdio", "--db", "/nonexistent/dir/j.db"}, upstream...), cli.ExitFailure,
			"toolgate serve: cannot create database /nonexistent/dir/j.db: the directory /nonexistent/dir does not exist"},
		{[]string{"console"}, cli.ExitUsage, "toolgate console: give SPEC, the OpenAPI document (JSON or YAML)"},
		{[]string{"console", shop, "--addr", "abc"}, cli.ExitUsage,
			"toolgate console: --addr abc: give a port, such as 8080, or host:port, such as 127.0.0.1:8080"},
		{[]string{"console", shop, "--addr", "0.0.0.0:0", "--db", db}, cli.ExitFailure,
			"toolgate console: listening on an address other than loopback requires a bearer token in $TOOLGATE_TOKEN"},
		{[]string{"console", shop, "--addr", busy.Addr().String(), "--db", db}, cli.ExitFailure,
			"toolgate console: " + busy.Addr().String() + " is already in use by another program: stop it, or give another port with --addr"},
		{[]string{"console", filepath.Join(dir, "missing.yaml"), "--db", db}, cli.ExitFailure,
			"toolgate console: cannot read the document " + filepath.Join(dir, "missing.yaml") + ": no such file"},
		{[]string{"calls", "extra", "--db", db}, cli.ExitUsage, `toolgate calls: unexpected argument "extra": toolgate calls takes none`},
		{[]string{"resolve"}, cli.ExitUsage, "toolgate resolve: give KEY, the key of the call as toolgate calls lists it"},
		{[]string{"resolve", "k", "--applied", "--db", db}, cli.ExitUsage, "toolgate resolve: say either --applied or --not-applied, and --note what you checked"},
		{[]string{"resolve", "k", "--applied", "--not-applied", "--note", "x", "--db", db}, cli.ExitUsage, "toolgate resolve: say either --applied or --not-applied"},
		{[]string{"resolve", "k", "--applied", "--note", "checked", "--db", db}, cli.ExitFailure,
			`toolgate resolve: no call with key "k" in the journal; toolgate calls lists the calls whose outcome is unknown, with their keys`},
	} {
		var out, errOut bytes.Buffer
		code := cli.Main(context.Background(), c.args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
			Getenv: func(k string) string { return map[string]string{"XDG_DATA_HOME": dir}[k] }})
		first, _, _ := strings.Cut(errOut.String(), "\n")
		name := strings.Join(c.args, " ")
		if code != c.code || !strings.Contains(first, c.want) {
			t.Errorf("toolgate %s: exit %d, %q\nwant exit %d, %q", name, code, first, c.code, c.want)
		}
		rest := first[strings.Index(first, ": ")+2:]
		for _, bad := range []string{"toolgate: ", "spec: ", "config: ", "sqlstore: ", "journal: ", "!!", "Go struct", "map[", "%!", "secret"} {
			if strings.Contains(rest, bad) {
				t.Errorf("toolgate %s: %q has %q", name, first, bad)
			}
		}
	}
}

// TestHelpOfEveryCommand checks that 'help COMMAND' is 'COMMAND --help'
// for every command the program's help lists, with its flags and the
// exit codes, and that the resolve rule is stated where it applies.
func TestHelpOfEveryCommand(t *testing.T) {
	code, top, _ := run("help")
	_, list, _ := strings.Cut(top, "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	names := regexp.MustCompile(`(?m)^  (\S+)`).FindAllStringSubmatch(list, -1)
	if code != cli.ExitOK || len(names) != 9 {
		t.Fatalf("help: exit %d, %d commands:\n%s", code, len(names), top)
	}
	for _, m := range names {
		name := m[1]
		hc, h, _ := run("help", name)
		fc, f, _ := run(name, "--help")
		if hc != cli.ExitOK || fc != cli.ExitOK || h != f || !strings.HasPrefix(h, "usage: toolgate "+name+" ") ||
			!strings.Contains(h, "exit codes:") || !strings.Contains(h, "-h, --help") {
			t.Errorf("help %s (exit %d) and %s --help (exit %d):\n%s\n---\n%s", name, hc, name, fc, h, f)
		}
	}
	if _, h, _ := run("help", "resolve"); !strings.Contains(h, "Say exactly one of --applied and --not-applied, and with --note what you") {
		t.Errorf("help resolve does not state the rule:\n%s", h)
	}
}

// TestVersionJSON checks version --json against the schema both programs
// share.
func TestVersionJSON(t *testing.T) {
	code, out, errOut := run("version", "--json")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	schematest.Check(t, "version.json", []byte(out))
}
