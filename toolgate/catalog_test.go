package toolgate_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/risk"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

func shop(t testing.TB, configYAML string) *toolgate.Catalog {
	t.Helper()
	doc, err := spec.Load("../examples/shop/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if configYAML != "" {
		if cfg, err = config.Parse([]byte(configYAML)); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestDefaultsAreSafe(t *testing.T) {
	t.Parallel()
	cat := shop(t, "")
	want := map[string]struct {
		class   risk.Class
		exposed bool
	}{
		"listOrders":  {risk.Read, true},
		"getOrder":    {risk.Read, true},
		"createOrder": {risk.Write, true},
		"deleteOrder": {risk.Destructive, false},
		"refundOrder": {risk.Destructive, false},
		"listApiKeys": {risk.Privileged, false},
		"getCategory": {risk.Write, true}, // x-risk: write
	}
	for name, w := range want {
		tool := cat.Lookup(name)
		if tool == nil {
			t.Fatalf("no tool %s", name)
		}
		if tool.Risk.Class != w.class || tool.Exposed != w.exposed {
			t.Errorf("%s: %s, exposed %v (%s); want %s, exposed %v", name, tool.Risk.Class, tool.Exposed, tool.Exposure, w.class, w.exposed)
		}
		if tool.Deadline != 30*time.Second {
			t.Errorf("%s: deadline %s, want the 30 s default", name, tool.Deadline)
		}
	}
	a := cat.Lookup("listOrders").Annotations
	if !a.ReadOnly || a.Destructive || !a.Idempotent || !a.OpenWorld {
		t.Errorf("listOrders annotations %+v", a)
	}
	a = cat.Lookup("deleteOrder").Annotations
	if a.ReadOnly || !a.Destructive || !a.Idempotent {
		t.Errorf("deleteOrder annotations %+v", a)
	}
	if cat.Lookup("createOrder").Annotations.Idempotent {
		t.Errorf("a POST tool says it is idempotent")
	}
	if cat.Lookup("createOrder").Retry != retry.ByMethod {
		t.Errorf("a POST tool opted in by default")
	}
}

func TestConfigurationEnablesAndOverrides(t *testing.T) {
	t.Parallel()
	cat := shop(t, `
defaults:
  deadline: 10s
tags:
  payments:
    expose: [read, write, destructive]
    deadline: 5s
tools:
  deleteOrder:
    expose: true
    deadline: 2s
  createOrder:
    retry: opted_in
  listOrders:
    expose: false
  getCategory:
    risk: read
`)
	if tl := cat.Lookup("refundOrder"); !tl.Exposed || !strings.Contains(tl.Exposure, "tag") || tl.Deadline != 5*time.Second {
		t.Errorf("refundOrder: %+v", tl)
	}
	if tl := cat.Lookup("deleteOrder"); !tl.Exposed || tl.Deadline != 2*time.Second {
		t.Errorf("deleteOrder: %+v", tl)
	}
	if tl := cat.Lookup("listOrders"); tl.Exposed || !strings.Contains(tl.Exposure, "hidden by") {
		t.Errorf("listOrders: %+v", tl)
	}
	if tl := cat.Lookup("createOrder"); tl.Retry != retry.OptedIn || tl.Deadline != 10*time.Second {
		t.Errorf("createOrder: %+v", tl)
	}
	if tl := cat.Lookup("getCategory"); tl.Risk.Class != risk.Read || !tl.RiskOverride || !strings.Contains(strings.Join(tl.Risk.Reasons, " "), "by the configuration") {
		t.Errorf("getCategory: %+v", tl)
	}
	if tl := cat.Lookup("listApiKeys"); tl.Exposed {
		t.Errorf("a privileged tool nobody enabled is exposed")
	}
}

func TestConfigurationMistakesAreErrors(t *testing.T) {
	t.Parallel()
	doc, _ := spec.Load("../examples/shop/openapi.yaml")
	for name, tt := range map[string]struct{ yaml, want string }{
		"unknown tool":     {"tools:\n  deleteOrdr:\n    expose: true\n", "deleteOrdr"},
		"unknown tag":      {"tags:\n  admn:\n    expose: true\n", "admn"},
		"misspelt field":   {"tools:\n  deleteOrder:\n    exposed: true\n", "exposed"},
		"opt-in for a tag": {"tags:\n  orders:\n    retry: opted_in\n", "never for a whole tag"},
		"bad class":        {"tools:\n  getOrder:\n    risk: harmless\n", "harmless"},
		"bad deadline":     {"defaults:\n  deadline: soon\n", "soon"},
		"auth without env": {"upstream:\n  auth:\n    type: bearer\n", "env"},
		"bad upstream":     {"upstream:\n  url: ftp://x\n", "ftp"},
		"bad retry mode":   {"tools:\n  createOrder:\n    retry: always\n", "always"},
		"guard for a tag": {"tags:\n  orders:\n    guard: identical\n",
			"line 3: tags.orders.guard is \"identical\"; the guard is set per tool, never for a whole tag: give it to each tool that needs it, such as tools.NAME.guard: identical"},
		"bad guard": {"tools:\n  createOrder:\n    guard: none\n",
			`line 3: tools.createOrder.guard is "none"; give resource (one open call per tool and resource, the default) or identical (one open call per tool and arguments)`},
		"a destructive default": {"defaults:\n  expose: read+destructive\n",
			`line 2: defaults.expose is "read+destructive"; the default exposes none, read or read+write: expose destructive tools by tag (expose: [read, write, destructive]) or one by one (tools.NAME.expose: confirm or true)`},
		"a bad class in a tag": {"tags:\n  orders:\n    expose: [read, harmless]\n",
			`line 3: tags.orders.expose names "harmless", which is not a risk class; give read, write, destructive or privileged (or none)`},
		"classes for a tool": {"tools:\n  deleteOrder:\n    expose: [destructive]\n",
			"line 3: tools.deleteOrder.expose is a list; a tool rule takes true (show this tool, whatever its class), confirm (show it, and have a person accept each call before it is sent) or false (hide it)"},
		"a map for expose": {"defaults:\n  expose: {read: true}\n",
			`line 2: defaults.expose has no setting "read"; the settings are show and confirm: show lists the classes shown, confirm the classes shown with a person's confirmation of each call, such as {show: [read], confirm: [write]}`},
		"confirm for a tag": {"tags:\n  orders:\n    expose: confirm\n",
			`line 3: tags.orders.expose is "confirm"; confirm alone is for a tool: a tag or the default names the classes a person confirms, such as {show: [read], confirm: [write]}`},
		"confirm in a tag's list": {"tags:\n  orders:\n    expose: [read, confirm]\n",
			`line 3: tags.orders.expose names "confirm"; confirm alone is for a tool: a tag or the default names the classes a person confirms, such as {show: [read], confirm: [write]}`},
		"a destructive default confirmed": {"defaults:\n  expose: {show: read, confirm: [write, destructive]}\n",
			`line 2: defaults.expose.confirm is "[write, destructive]"; the default exposes none, read or read+write: expose destructive tools by tag (expose: [read, write, destructive]) or one by one (tools.NAME.expose: confirm or true)`},
		"a class shown and confirmed": {"tags:\n  payments:\n    expose: {show: [read, destructive], confirm: destructive}\n",
			"line 3: tags.payments.expose is {show: [read, destructive], confirm: destructive}; destructive is both in show and in confirm: list it in one of them"},
		"a class confirmed on its own line": {"tags:\n  payments:\n    expose:\n      show: [read, destructive]\n      confirm: destructive\n",
			"line 5: tags.payments.expose is {show: [read, destructive], confirm: destructive}; destructive is both in show and in confirm: list it in one of them"},
		"a nested mapping": {"tags:\n  payments:\n    expose: {confirm: {destructive: true}}\n",
			"line 3: tags.payments.expose.confirm is a mapping; give none, a class, classes joined with + such as read+write, or a list of classes such as [read, write]"},
		"a mapping in the list": {"tags:\n  payments:\n    expose: {confirm: [{destructive: true}]}\n",
			"line 3: tags.payments.expose.confirm lists a mapping; list the classes by name: read, write, destructive or privileged"},
		"bad confirm timeout": {"tools:\n  deleteOrder:\n    confirm_timeout: 2d\n",
			`line 3: tools.deleteOrder.confirm_timeout is "2d"; give a duration such as 30s or 2m, up to 1h`},
		"confirm timeout misspelt": {"defaults:\n  confirm_timout: 2m\n",
			`line 2: defaults has no setting "confirm_timout" (did you mean confirm_timeout?); the settings are deadline, confirm_timeout, rate_limit, replay and expose`},
	} {
		cfg, err := config.Parse([]byte(tt.yaml))
		if err == nil {
			_, err = toolgate.Build(doc, cfg)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "risk: risk:") || strings.Contains(err.Error(), "config: config:") {
			t.Errorf("%s: %v; want an error mentioning %q", name, err, tt.want)
		}
	}
}

func TestInputSchema(t *testing.T) {
	t.Parallel()
	cat := shop(t, "tags:\n  payments:\n    expose: true\n")
	s, err := cat.InputSchema(cat.Lookup("refundOrder"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Properties           map[string]map[string]any
		Required             []string
		AdditionalProperties *bool
	}
	json.Unmarshal(s, &m)
	if m.Properties["id"] == nil || m.Properties["X-Reason"] == nil || len(m.Required) != 1 || m.Required[0] != "id" ||
		m.AdditionalProperties == nil || *m.AdditionalProperties {
		t.Fatalf("schema %s", s)
	}
	s, _ = cat.InputSchema(cat.Lookup("createOrder"))
	if !strings.Contains(string(s), `"body"`) || !strings.Contains(string(s), `"quantity"`) {
		t.Fatalf("createOrder schema %s", s)
	}
	out, _ := cat.OutputSchema(cat.Lookup("getOrder"))
	if !strings.Contains(string(out), `"sku"`) {
		t.Fatalf("output schema %s", out)
	}
}

func TestToolNames(t *testing.T) {
	t.Parallel()
	doc, err := spec.Parse([]byte(`{"openapi": "3.0.0", "paths": {
	  "/a/{b}": {"get": {"operationId": "repos/get", "responses": {}}, "put": {"operationId": "repos/get", "responses": {}}},
	  "/x": {"post": {"responses": {}}},
	  "/long": {"get": {"operationId": "` + strings.Repeat("very-long.", 20) + `", "responses": {}}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range cat.Tools {
		if !toolgate.ValidName(tl.Name) || seen[tl.Name] {
			t.Errorf("name %q invalid or repeated", tl.Name)
		}
		seen[tl.Name] = true
	}
	for _, want := range []string{"repos_get", "repos_get_2", "post_x"} {
		if !seen[want] {
			t.Errorf("no tool %q in %v", want, seen)
		}
	}
}

// github loads GitHub's description into a catalog with the defaults.
func github(t *testing.T) *toolgate.Catalog {
	t.Helper()
	doc, err := spec.Load(testspecs.GitHub(t))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestGitHubDescription(t *testing.T) {
	t.Parallel()
	cat := github(t)
	if len(cat.Tools) < 1000 {
		t.Fatalf("%d tools from GitHub's description", len(cat.Tools))
	}
	seen := map[string]bool{}
	for _, tl := range cat.Tools {
		if !toolgate.ValidName(tl.Name) {
			t.Errorf("invalid tool name %q", tl.Name)
		}
		if seen[tl.Name] {
			t.Errorf("tool name %q twice", tl.Name)
		}
		seen[tl.Name] = true
		if tl.Exposed && tl.Risk.Class >= risk.Destructive {
			t.Errorf("%s (%s) exposed by default", tl.Name, tl.Risk.Class)
		}
	}
	_, sum, err := cat.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GitHub: %d tools: %v; exposed %d: %v; tools/list %d bytes", sum.Tools, sum.ByClass, sum.Exposed, sum.ExposedByClass, sum.ListBytes)
	if sum.ByClass["destructive"] == 0 || sum.ByClass["privileged"] == 0 || sum.ExposedByClass["destructive"]+sum.ExposedByClass["privileged"] != 0 {
		t.Fatalf("counts %+v", sum)
	}
	if tl := cat.Lookup("repos_delete"); tl == nil || tl.Risk.Class < risk.Destructive || tl.Exposed {
		t.Fatalf("repos_delete: %+v", tl)
	}

	// Every schema is a valid JSON Schema, and the list is the same on
	// every load, even where the size limits cut a schema short.
	for _, tl := range cat.Exposed() {
		in, err := cat.InputSchema(tl)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cat.OutputSchema(tl)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []json.RawMessage{in, out} {
			if s == nil {
				continue
			}
			var schema jsonschema.Schema
			if err := json.Unmarshal(s, &schema); err != nil {
				t.Fatalf("%s: %v", tl.Name, err)
			}
			if _, err := schema.Resolve(nil); err != nil {
				t.Fatalf("%s: %v", tl.Name, err)
			}
		}
	}
	first, err := cat.ListJSON()
	if err != nil {
		t.Fatal(err)
	}
	cat2 := github(t)
	// Expansions of references are reused: build the schemas in the
	// opposite order first, so that a different set is reused.
	exposed := cat2.Exposed()
	for i := len(exposed) - 1; i >= 0; i-- {
		cat2.OutputSchema(exposed[i])
		cat2.InputSchema(exposed[i])
		cat2.ListedInputSchema(exposed[i])
	}
	if second, err := cat2.ListJSON(); err != nil || !bytes.Equal(first, second) {
		t.Fatalf("tools/list differs between two loads (%d and %d bytes, %v)", len(first), len(second), err)
	}
}

// TestStateChangingGET checks that a GET whose name says it changes state
// is classed by what it changes, hidden when that is destructive, and
// never retried once sent, like any other call that changes state.
func TestStateChangingGET(t *testing.T) {
	t.Parallel()
	doc, err := spec.Parse([]byte(`{"swagger": "2.0", "host": "slack.com", "paths": {
	  "/auth.revoke": {"get": {"operationId": "auth_revoke", "description": "Revokes a token.", "responses": {"200": {"description": "ok"}}}},
	  "/views.open": {"get": {"operationId": "views_open", "description": "Open a view for a user.", "responses": {"200": {"description": "ok"}}}},
	  "/conversations.list": {"get": {"operationId": "conversations_list", "description": "Lists all channels.", "responses": {"200": {"description": "ok"}}}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		class   risk.Class
		exposed bool
		retry   retry.Mode
	}{
		"auth_revoke":        {risk.Destructive, false, retry.NotSentOnly},
		"views_open":         {risk.Write, true, retry.NotSentOnly},
		"conversations_list": {risk.Read, true, retry.ByMethod},
	} {
		tl := cat.Lookup(name)
		if tl.Risk.Class != want.class || tl.Exposed != want.exposed || tl.Retry != want.retry || tl.Annotations.ReadOnly != (want.class == risk.Read) {
			t.Errorf("%s: %s, exposed %v, retry %v, annotations %+v; want %s, exposed %v, retry %v", name, tl.Risk.Class, tl.Exposed, tl.Retry, tl.Annotations, want.class, want.exposed, want.retry)
		}
	}
}

// TestExposureNarrows checks the exposure rules: a default of none, read
// or read+write; tag rules that show read and write tools, and destructive
// or privileged ones only when they name the class; tool rules that enable
// one tool; and inspect's account of which rule decided.
func TestExposureNarrows(t *testing.T) {
	t.Parallel()
	type want struct {
		exposed bool
		rule    string
		why     string
	}
	for _, tt := range []struct {
		name, config string
		tools        map[string]want
	}{
		{"the default", "", map[string]want{
			"listOrders":  {true, "defaults.expose", "exposed by defaults.expose: read+write"},
			"createOrder": {true, "defaults.expose", "exposed by defaults.expose: read+write"},
			"deleteOrder": {false, "built-in", "destructive tools are never exposed by default; enable this one with tools.deleteOrder.expose: true"},
		}},
		{"reads only", "defaults: {expose: read}", map[string]want{
			"listOrders":  {true, "defaults.expose", "exposed by defaults.expose: read"},
			"createOrder": {false, "defaults.expose", "hidden by defaults.expose: read (a write tool)"},
		}},
		{"nothing but one tag", "defaults: {expose: none}\ntags: {orders: {expose: true}}", map[string]want{
			"listOrders":  {true, "tags.orders.expose", "exposed by tags.orders.expose: true"},
			"createOrder": {true, "tags.orders.expose", "exposed by tags.orders.expose: true"},
			"deleteOrder": {false, "tags.orders.expose", "tags.orders.expose: true shows read+write tools, not destructive ones"},
			"getCategory": {false, "defaults.expose", "hidden by defaults.expose: none (a write tool)"},
		}},
		{"false as a default", "defaults: {expose: false}", map[string]want{
			"listOrders": {false, "defaults.expose", "hidden by defaults.expose: false (a read tool)"},
		}},
		{"a tag rule does not widen to destructive tools", "tags: {payments: {expose: true}}", map[string]want{
			"refundOrder": {false, "tags.payments.expose", "name destructive in the tag's list, or enable this tool with tools.refundOrder.expose: true"},
		}},
		{"a tag rule that names the class", "tags: {payments: {expose: [read, write, destructive]}}", map[string]want{
			"refundOrder": {true, "tags.payments.expose", "exposed by tags.payments.expose: [read, write, destructive]"},
		}},
		{"a tag rule narrows to reads", "tags: {orders: {expose: read}}", map[string]want{
			"listOrders":  {true, "tags.orders.expose", "exposed by tags.orders.expose: read"},
			"createOrder": {false, "tags.orders.expose", "hidden by tags.orders.expose: read (a write tool)"},
		}},
		{"one tool enabled", "defaults: {expose: none}\ntools: {deleteOrder: {expose: true}, listApiKeys: {expose: false}}", map[string]want{
			"deleteOrder": {true, "tools.deleteOrder.expose", "enabled by tools.deleteOrder.expose: true"},
			"listApiKeys": {false, "tools.listApiKeys.expose", "hidden by tools.listApiKeys.expose: false"},
			"listOrders":  {false, "defaults.expose", "hidden by defaults.expose: none"},
		}},
	} {
		cat := shop(t, tt.config)
		for name, w := range tt.tools {
			tl := cat.Lookup(name)
			if tl.Exposed != w.exposed || tl.ExposureRule != w.rule || !strings.Contains(tl.Exposure, w.why) {
				t.Errorf("%s: %s: exposed %v by %q (%s); want %v by %q (%s)", tt.name, name, tl.Exposed, tl.ExposureRule, tl.Exposure, w.exposed, w.rule, w.why)
			}
		}
	}
}

// TestTagRulesNarrowest checks that when a tool has several tags, the
// narrowest of their rules wins: a tag rule never widens what another of
// the tool's tags hides.
func TestTagRulesNarrowest(t *testing.T) {
	t.Parallel()
	doc, err := spec.Parse([]byte(`{"openapi": "3.0.0", "paths": {
	  "/a": {"get": {"operationId": "both", "tags": ["wide", "narrow"], "responses": {}},
	         "post": {"operationId": "wideOnly", "tags": ["wide"], "responses": {}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("defaults: {expose: none}\ntags: {wide: {expose: true}, narrow: {expose: false}}"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tl := cat.Lookup("both"); tl.Exposed || tl.ExposureRule != "tags.narrow.expose" {
		t.Errorf("both: exposed %v by %s", tl.Exposed, tl.ExposureRule)
	}
	if tl := cat.Lookup("wideOnly"); !tl.Exposed || tl.ExposureRule != "tags.wide.expose" {
		t.Errorf("wideOnly: exposed %v by %s", tl.Exposed, tl.ExposureRule)
	}
}

// TestGitHubOnlyIssues checks that serving only GitHub's issues takes two
// lines of configuration, and exposes nothing destructive or privileged.
func TestGitHubOnlyIssues(t *testing.T) {
	t.Parallel()
	doc, err := spec.Load(testspecs.GitHub(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("defaults: {expose: none}\ntags: {issues: {expose: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, tl := range cat.Tools {
		issues := len(tl.Tags) == 1 && tl.Tags[0] == "issues"
		if issues && tl.Risk.Class <= risk.Write {
			want++
		}
		if tl.Exposed && (!issues || tl.Risk.Class > risk.Write) {
			t.Errorf("%s (%s, tags %v) exposed: %s", tl.Name, tl.Risk.Class, tl.Tags, tl.Exposure)
		}
	}
	if got := len(cat.Exposed()); got != want || got == 0 {
		t.Errorf("%d tools exposed, want the %d read and write tools of issues", got, want)
	}
	t.Logf("only issues: %d tools exposed", want)
}
