package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/config"
)

// commented is a configuration as a person writes it: comments above,
// beside and below settings, blank lines, flow and block entries.
const commented = `# toolgate's configuration for the shop
upstream:
  url: https://api.example.com   # the real one

defaults:
  deadline: 30s

# tags
tags:
  orders: {expose: true}                     # its read and write tools
  payments: {expose: [read, write], deadline: 10s}

tools:
  # opting in is per tool
  createOrder: {retry: opted_in}             # the API dedupes by key
  deleteOrder:
    # one destructive tool
    expose: confirm   # each call accepted
    deadline: 5s
    # more to come
  listOrders: {risk: read}
# the end
`

func edit(section, name, field, value string) config.Edit {
	return config.Edit{Setting: config.Setting{Section: section, Name: name, Field: field}, Value: value}
}

// TestApplyKeepsTheRest checks that an edit rewrites the entry it names
// and nothing else: every comment, blank line and other entry stays as
// written.
func TestApplyKeepsTheRest(t *testing.T) {
	for _, c := range []struct {
		name  string
		edits []config.Edit
		want  string // commented with these replacements, old → new
		repl  []string
	}{
		{"a flow entry's field changed", []config.Edit{edit("tools", "createOrder", "retry", "not_sent_only")}, "",
			[]string{"  createOrder: {retry: opted_in}             # the API dedupes by key\n", "  createOrder: {retry: not_sent_only} # the API dedupes by key\n"}},
		{"a field added to a flow entry", []config.Edit{edit("tags", "orders", "deadline", "20s")}, "",
			[]string{"  orders: {expose: true}                     # its read and write tools\n", "  orders: {expose: true, deadline: 20s} # its read and write tools\n"}},
		{"a list written as a list", []config.Edit{edit("tags", "payments", "expose", "[read, write, destructive]")}, "",
			[]string{"  payments: {expose: [read, write], deadline: 10s}\n", "  payments: {expose: [read, write, destructive], deadline: 10s}\n"}},
		{"a block entry's field changed, its comments kept", []config.Edit{edit("tools", "deleteOrder", "expose", "true")}, "",
			[]string{"    expose: confirm   # each call accepted\n", "    expose: true # each call accepted\n"}},
		{"a block entry's field removed", []config.Edit{edit("tools", "deleteOrder", "deadline", "")}, "",
			[]string{"    deadline: 5s\n", ""}},
		{"a new tool, at the end of the tools", []config.Edit{edit("tools", "getOrder", "expose", "false")}, "",
			[]string{"  listOrders: {risk: read}\n", "  listOrders: {risk: read}\n  getOrder: {expose: false}\n"}},
		{"an entry left empty goes", []config.Edit{edit("tools", "listOrders", "risk", "")}, "",
			[]string{"  listOrders: {risk: read}\n", ""}},
		{"an entry left empty keeps its comment", []config.Edit{edit("tools", "createOrder", "retry", "")}, "",
			[]string{"  createOrder: {retry: opted_in}             # the API dedupes by key\n", "  createOrder: {} # the API dedupes by key\n"}},
		{"removing what is not there changes nothing", []config.Edit{edit("tools", "getOrder", "retry", ""), edit("tags", "admin", "expose", "")}, "", nil},
		{"two edits of one entry", []config.Edit{edit("tools", "createOrder", "expose", "confirm"), edit("tools", "createOrder", "deadline", "1m")}, "",
			[]string{"  createOrder: {retry: opted_in}             # the API dedupes by key\n", "  createOrder: {retry: opted_in, expose: confirm, deadline: 1m} # the API dedupes by key\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := commented
			for i := 0; i+1 < len(c.repl); i += 2 {
				if !strings.Contains(want, c.repl[i]) {
					t.Fatalf("the test's text lacks %q", c.repl[i])
				}
				want = strings.Replace(want, c.repl[i], c.repl[i+1], 1)
			}
			got, err := config.Apply([]byte(commented), c.edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			if _, err := config.Parse(got); err != nil {
				t.Fatalf("the result does not load: %v", err)
			}
		})
	}
}

// TestApplyMeaning checks that the loader reads what an edit wrote.
func TestApplyMeaning(t *testing.T) {
	out, err := config.Apply([]byte(commented), []config.Edit{
		edit("tools", "deleteOrder", "expose", "true"), edit("tools", "getOrder", "retry", "opted_in"),
		edit("tags", "payments", "deadline", "15s"), edit("tools", "null", "expose", "false"),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if e := cfg.Tools["deleteOrder"].Expose; e == nil || e.As != "true" {
		t.Errorf("deleteOrder's expose: %+v", e)
	}
	if r := cfg.Tools["getOrder"].Retry; r == nil || r.String() != "opted_in" {
		t.Errorf("getOrder's retry: %v", r)
	}
	if d := cfg.Tags["payments"].Deadline.String(); d != "15s" {
		t.Errorf("payments' deadline: %s", d)
	}
	// A name that YAML would read as something else is quoted.
	if e := cfg.Tools["null"].Expose; e == nil || e.As != "false" {
		t.Errorf("the tool named null: %+v\n%s", cfg.Tools["null"], out)
	}
}

// TestApplySections checks sections that are missing, empty or written
// in flow style.
func TestApplySections(t *testing.T) {
	for _, c := range []struct {
		name, in string
		e        config.Edit
		want     string
	}{
		{"an empty file", "", edit("tags", "orders", "deadline", "10s"), "tags:\n  orders: {deadline: 10s}\n"},
		{"a file of comments", "# nothing yet\n", edit("tools", "a", "expose", "true"), "# nothing yet\ntools:\n  a: {expose: true}\n"},
		{"no such section", "defaults:\n  deadline: 30s\n\n\n", edit("tools", "a", "expose", "confirm"), "defaults:\n  deadline: 30s\ntools:\n  a: {expose: confirm}\n"},
		{"an empty section", "tools:   # none yet\ndefaults: {deadline: 30s}\n", edit("tools", "a", "expose", "true"),
			"tools:   # none yet\n  a: {expose: true}\ndefaults: {deadline: 30s}\n"},
		{"a section in flow style", "tools: {a: {expose: true}}\n", edit("tools", "b", "retry", "opted_in"), "tools: {a: {expose: true}, b: {retry: opted_in}}\n"},
		{"four spaces kept", "tools:\n    a:\n        expose: true\n", edit("tools", "a", "deadline", "9s"), "tools:\n    a:\n        expose: true\n        deadline: 9s\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := config.Apply([]byte(c.in), []config.Edit{c.e})
			if err != nil || string(got) != c.want {
				t.Fatalf("got %v\n%s\nwant\n%s", err, got, c.want)
			}
			if _, err := config.Parse(got); err != nil {
				t.Fatalf("the result does not load: %v", err)
			}
		})
	}
}

// TestApplyRefuses checks the edits that are refused, with why.
func TestApplyRefuses(t *testing.T) {
	const shared = "tools:\n  a: &x {expose: true}\n  b: *x\n"
	for _, c := range []struct {
		in   string
		e    config.Edit
		want string
	}{
		{shared, edit("tools", "a", "expose", "false"), "tools.a uses a YAML anchor, alias or merge key"},
		{shared, edit("tools", "b", "expose", "false"), "tools.b uses a YAML anchor, alias or merge key"},
		{commented, edit("tools", "a", "expose", "{"), `tools.a.expose is "{", which is not a YAML value`},
		{commented, edit("tools", "a", "expose", "true\nb: 1"), "tools.a.expose: give its value on one line"},
		{commented, edit("tools", "a", "expose", "*x"), "tools.a.expose"},
		{"[1, 2]\n", edit("tools", "a", "expose", "true"), "not written as a block mapping"},
		{commented, edit("defaults", "", "expose", "none"), "only the settings of tags and tools"},
	} {
		_, err := config.Apply([]byte(c.in), []config.Edit{c.e})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s in\n%s: %v; want %q", c.e.Setting, c.in, err, c.want)
		}
	}
	// An edit of another entry is fine.
	if out, err := config.Apply([]byte(shared), []config.Edit{edit("tools", "c", "expose", "false")}); err != nil || !strings.HasSuffix(string(out), "  c: {expose: false}\n") {
		t.Errorf("an entry beside shared ones: %v\n%s", err, out)
	}
}

func TestWritten(t *testing.T) {
	got, err := config.Written([]byte(commented))
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]string{"tools.createOrder.retry": "opted_in", "tools.deleteOrder.expose": "confirm",
		"tools.deleteOrder.deadline": "5s", "tags.payments.expose": "[read, write]", "tags.orders.expose": "true"} {
		parts := strings.SplitN(s, ".", 3)
		if v := got[config.Setting{Section: parts[0], Name: parts[1], Field: parts[2]}]; v != want {
			t.Errorf("%s: %q, want %q", s, v, want)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d settings: %v", len(got), got)
	}
}

// TestWriteFile checks that the configuration is replaced whole, keeps
// its permissions, is written through a symbolic link, and leaves no
// temporary file behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "toolgate.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := config.WriteFile(link, []byte("tools: {}\n")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(real)
	info, _ := os.Stat(real)
	if string(data) != "tools: {}\n" || info.Mode().Perm() != 0o640 {
		t.Errorf("the file holds %q with mode %v", data, info.Mode().Perm())
	}
	if l, err := os.Lstat(link); err != nil || l.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	fresh := filepath.Join(dir, "new.yaml")
	if err := config.WriteFile(fresh, []byte("a: 1\n")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(fresh); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("files left in the directory: %v", entries)
	}
	if err := config.WriteFile(filepath.Join(dir, "missing", "x.yaml"), nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing directory: %v", err)
	}
}
