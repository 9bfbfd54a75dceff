package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

func TestParse(t *testing.T) {
	c, err := config.Parse([]byte(`
base: &base {expose: true, deadline: 10s}
upstream:
  url: https://api.example.com/v1
  auth: {type: header, env: SHOP_KEY, header: X-API-Key}
defaults:
  deadline: 20s
tags:
  payments:
    <<: *base
tools:
  createOrder: {retry: opted_in, risk: destructive}
  listOrders:
  deleteOrder: {expose: true}
`))
	if err == nil {
		t.Fatal("a top-level setting that is not one (base) was accepted")
	}
	// The same without the stray anchor holder.
	c, err = config.Parse([]byte(`
upstream:
  url: https://api.example.com/v1
  auth: {type: header, env: SHOP_KEY, header: X-API-Key}
defaults:
  deadline: 20s
tags:
  payments: &base {expose: true, deadline: 10s}
  orders:
    <<: *base
    deadline: 5s
tools:
  createOrder: {retry: opted_in, risk: destructive}
  listOrders:
  deleteOrder: {expose: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstream.URL != "https://api.example.com/v1" || (c.Upstream.Auth.Type != "header" || c.Upstream.Auth.Env != "SHOP_KEY" || c.Upstream.Auth.Header != "X-API-Key") {
		t.Errorf("upstream %+v", c.Upstream)
	}
	if c.Deadline != 20*time.Second {
		t.Errorf("deadline %v", c.Deadline)
	}
	if o := c.Tags["orders"]; o.Expose == nil || o.Expose.Classes != config.ReadWrite || o.Deadline != 5*time.Second {
		t.Errorf("orders, merged from payments: %+v", o)
	}
	if r := c.Tools["createOrder"]; r.Retry == nil || *r.Retry != retry.OptedIn || r.Risk == nil || *r.Risk != risk.Destructive {
		t.Errorf("createOrder %+v", r)
	}
	if _, ok := c.Tools["listOrders"]; !ok {
		t.Error("a tool named without settings is dropped")
	}
	if r := c.Tools["deleteOrder"]; r.Expose == nil || !r.Expose.Classes.Has(risk.Destructive) {
		t.Errorf("deleteOrder %+v", r)
	}
	if c, err := config.Parse(nil); err != nil || c.Upstream.Auth.Type != "none" || c.Deadline != 30*time.Second {
		t.Errorf("an empty configuration: %+v, %v", c, err)
	}
}

// TestParseConfirmAndGuard reads what a person confirms, how long they
// have, and the guard, at each level where each may be set.
func TestParseConfirmAndGuard(t *testing.T) {
	c, err := config.Parse([]byte(`
defaults:
  confirm_timeout: 45s
  expose: {show: read, confirm: write}
tags:
  payments:
    expose:
      confirm: [destructive]
      show: [read]
    confirm_timeout: 2m
tools:
  refundOrder: {expose: confirm, confirm_timeout: 10s, guard: identical}
  deleteOrder: {expose: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	write, destructive := config.Classes(0).With(risk.Write), config.Classes(0).With(risk.Destructive)
	if e := c.Expose; e.Classes != config.ReadWrite || e.Confirm != write || e.As != "{show: read, confirm: write}" || c.ConfirmTimeout != 45*time.Second {
		t.Errorf("defaults: %+v, confirm_timeout %v", e, c.ConfirmTimeout)
	}
	if r := c.Tags["payments"]; r.Expose == nil || r.Expose.Classes != destructive.With(risk.Read) || r.Expose.Confirm != destructive ||
		r.Expose.As != "{confirm: [destructive], show: [read]}" || r.ConfirmTimeout != 2*time.Minute {
		t.Errorf("payments: %+v %+v", r, r.Expose)
	}
	if r := c.Tools["refundOrder"]; r.Expose == nil || r.Expose.Classes != config.All || r.Expose.Confirm != config.All ||
		r.ConfirmTimeout != 10*time.Second || r.Guard != config.GuardIdentical {
		t.Errorf("refundOrder: %+v %+v", r, r.Expose)
	}
	if r := c.Tools["deleteOrder"]; r.Expose == nil || r.Expose.Classes != 0 || r.Expose.Confirm != 0 || r.Guard != "" {
		t.Errorf("deleteOrder: %+v %+v", r, r.Expose)
	}
	if d := config.Default(); d.ConfirmTimeout != 5*time.Minute || d.Expose.Confirm != 0 {
		t.Errorf("default: %+v", d)
	}
}

// Rate limits: the built-in ones by class, changed class by class under
// defaults, set or lifted by a tag or a tool.
func TestParseRateLimits(t *testing.T) {
	d := config.Default().RateLimits
	if d[risk.Write] != (config.RateLimit{PerMinute: 10, Burst: 5}) || d[risk.Destructive] != (config.RateLimit{PerMinute: 3, Burst: 2}) ||
		d[risk.Privileged] != (config.RateLimit{PerMinute: 3, Burst: 2}) || !d[risk.Read].Unlimited() {
		t.Errorf("built-in rate limits: %+v", d)
	}
	c, err := config.Parse([]byte(`
defaults:
  rate_limit: {read: {per_minute: 600, burst: 50}, write: none}
tags:
  payments: {rate_limit: {per_minute: 0.5}}
tools:
  refundOrder: {rate_limit: {per_minute: 2, burst: 2}}
  listOrders: {rate_limit: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.RateLimits; r[risk.Read] != (config.RateLimit{PerMinute: 600, Burst: 50}) || !r[risk.Write].Unlimited() ||
		r[risk.Destructive] != (config.RateLimit{PerMinute: 3, Burst: 2}) {
		t.Errorf("defaults.rate_limit: %+v", r)
	}
	if r := c.Tags["payments"].RateLimit; r == nil || *r != (config.RateLimit{PerMinute: 0.5, Burst: 1}) || r.String() != "0.5 a minute, 1 at once" {
		t.Errorf("tags.payments.rate_limit: %+v", r)
	}
	if r := c.Tools["refundOrder"].RateLimit; r == nil || *r != (config.RateLimit{PerMinute: 2, Burst: 2}) {
		t.Errorf("tools.refundOrder.rate_limit: %+v", r)
	}
	if r := c.Tools["listOrders"].RateLimit; r == nil || !r.Unlimited() || r.String() != "unlimited" {
		t.Errorf("tools.listOrders.rate_limit: %+v", r)
	}
	if c.Tags["payments"].Deadline != 0 || c.Tools["deleteOrder"].RateLimit != nil {
		t.Errorf("settings not given were set: %+v %+v", c.Tags["payments"], c.Tools["deleteOrder"])
	}
}

// Every mistake is reported with its line, the field, the value as
// written and what to write instead, and never in Go's words.
func TestMistakes(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"tools:\n  createOrder:\n    expose: maybe\n",
			`line 3: tools.createOrder.expose is "maybe"; a tool rule takes true (show this tool, whatever its class), confirm (show it, and have a person accept each call before it is sent) or false (hide it)`},
		{"tools:\n  createOrder:\n    exposed: true\n",
			`line 3: tools.createOrder has no setting "exposed" (did you mean expose?); the settings are expose, risk, retry, deadline, confirm_timeout, rate_limit, replay and guard`},
		{"tools:\n  x:\n    replay: -1m\n",
			`line 3: tools.x.replay is "-1m"; give a duration such as 5m, up to 24h, or 0 to never replay`},
		{"defaults:\n  replay: 2d\n",
			`line 2: defaults.replay is "2d"; give a duration such as 5m, up to 24h, or 0 to never replay`},
		{"tool:\n  createOrder: {}\n",
			`line 1: there is no setting "tool" (did you mean tools?); the settings are upstream, mode, defaults, tags and tools`},
		{"tools: [createOrder]\n",
			`line 1: tools is a list; give a mapping of tool names to their settings, such as createOrder: {expose: true}`},
		{"tools:\n  createOrder: true\n",
			`line 2: tools.createOrder is "true"; give a mapping, such as {expose: true}`},
		{"just words\n",
			`line 1: the configuration is "just words"; give a mapping of its settings: upstream, mode, defaults, tags and tools`},
		{"mode: fast\n",
			`line 1: mode is "fast"; give tools (one tool per operation), search (three tools that search, describe and call the operations) or auto (search when there are too many operations for tools)`},
		{"defaults:\n  deadline: 5 minutes\n",
			`line 2: defaults.deadline is "5 minutes"; give a duration such as 30s or 2m, up to 1h`},
		{"tools:\n  x:\n    deadline: 2h\n",
			`line 3: tools.x.deadline is "2h"; give a duration such as 30s or 2m, up to 1h`},
		{"tools:\n  x:\n    risk: dangerous\n",
			`line 3: tools.x.risk is "dangerous"; give read, write, destructive or privileged`},
		{"tools:\n  x:\n    retry: always\n",
			`line 3: tools.x.retry is "always"; give by_method, opted_in or not_sent_only`},
		{"tags:\n  orders:\n    retry: opted_in\n",
			`line 3: tags.orders.retry: retries are set per tool, never for a whole tag: opting in must name the operation`},
		{"upstream:\n  url: ftp://x\n",
			`line 2: upstream.url is "ftp://x"; give an http or https URL, such as https://api.example.com`},
		{"upstream:\n  url: [a, b]\n",
			`line 2: upstream.url is a list; give an http or https URL, such as https://api.example.com`},
		{"upstream:\n  auth:\n    type: oauth\n",
			`line 3: upstream.auth.type is "oauth"; give none, bearer, basic, header, api_key, oauth2 or forward`},
		{"upstream:\n  auth:\n    type: bearer\n",
			`line 3: upstream.auth: type bearer needs the secret: env, the environment variable that holds it, or file, a file only its owner may read`},
		{"upstream:\n  auth: {type: header, env: K}\n",
			`line 2: upstream.auth: type header needs header, the header that carries the secret`},
		{"upstream:\n  auth: {type: bearer, env: K, file: /run/k}\n",
			`line 2: upstream.auth: give env or file, not both: the secret comes from one place`},
		{"upstream:\n  auth: {type: api_key, env: K}\n",
			`line 2: upstream.auth: type api_key needs in (header, query or cookie) and name, where the key goes, unless a scheme of the document says so (upstream.schemes)`},
		{"upstream:\n  auth: {type: api_key, env: K, in: body, name: k}\n",
			`line 2: upstream.auth.in is "body"; give header, query or cookie`},
		{"upstream:\n  auth: {type: oauth2, env: K, client_id: c}\n",
			`line 2: upstream.auth: type oauth2 needs token_url, the token endpoint, unless a scheme of the document gives it (upstream.schemes)`},
		{"upstream:\n  auth: {type: bearer, env: K, header: X-Key}\n",
			`line 2: upstream.auth: header is for type header, not bearer`},
		{"upstream:\n  schemes:\n    key: {env: K}\n",
			`line 3: upstream.schemes.key needs a type: none, bearer, basic, header, api_key, oauth2 or forward`},
		{"upstream:\n  schemes:\n    key: {type: api_key, env: K, in: query, name: k}\n",
			`line 3: upstream.schemes.key: the document's scheme says where its key goes; in and name are for upstream.auth, which no scheme places`},
		{"upstream:\n  schemes:\n    oauth: {type: oauth2, file: /run/secret}\n",
			`line 3: upstream.schemes.oauth: type oauth2 needs client_id, the OAuth2 client's id (its secret comes from env or file)`},
		{"upstream:\n  schemes:\n    user: {type: forward, env: K}\n",
			`line 3: upstream.schemes.user: type forward reads no secret: remove env and file`},
		{"upstream:\n  schemes:\n    oauth: {type: oauth2, client_id: c, env: K, token_url: ftp://x}\n",
			`line 3: upstream.schemes.oauth.token_url is "ftp://x"; give the token endpoint's https URL, such as https://auth.example.com/oauth/token`},
		{"upstream:\n  variables: {region: [eu]}\n",
			`line 2: upstream.variables.region is a list; give a mapping of the servers' variables to their values, such as region: eu`},
		{"tools:\n  a: {}\n  a: {}\n",
			`line 3: tools.a is given twice (first on line 2)`},
		{"tools:\n  a: {expose: true, expose: false}\n",
			`line 2: tools.a.expose is given twice (first on line 2)`},
		{"tags:\n  a:\n    expose:\n      show: read\n      show: write\n",
			`line 5: tags.a.expose.show is given twice (first on line 4)`},
		{"tools:\n  a: {expose: {show: read}}\n",
			`line 2: tools.a.expose is a mapping; a tool rule takes true (show this tool, whatever its class), confirm (show it, and have a person accept each call before it is sent) or false (hide it)`},
		{"defaults:\n  confirm_timeout: 0s\n",
			`line 2: defaults.confirm_timeout is "0s"; give a duration such as 30s or 2m, up to 1h`},
		{"tools:\n  a: {rate_limit: {per_minute: 0}}\n",
			`line 2: tools.a.rate_limit.per_minute is "0"; give the calls a minute, a number above 0 and up to 60000, such as 10 or 0.5`},
		{"tools:\n  a: {rate_limit: {per_minute: ten}}\n",
			`line 2: tools.a.rate_limit.per_minute is "ten"; give the calls a minute, a number above 0 and up to 60000, such as 10 or 0.5`},
		{"tags:\n  a:\n    rate_limit: {per_minute: 5, burst: 0}\n",
			`line 3: tags.a.rate_limit.burst is "0"; give how many calls may come at once, a whole number from 1 to 10000`},
		{"tags:\n  a:\n    rate_limit: {per_minute: 5, burst: 2.5}\n",
			`line 3: tags.a.rate_limit.burst is "2.5"; give how many calls may come at once, a whole number from 1 to 10000`},
		{"tools:\n  a:\n    rate_limit: {burst: 3}\n",
			`line 3: tools.a.rate_limit needs per_minute, the calls a minute on average; give {per_minute: N, burst: B} (N calls a minute on average, up to 60000; B at once, 1 to 10000, default 1) or none`},
		{"tools:\n  a:\n    rate_limit: 10/min\n",
			`line 3: tools.a.rate_limit is "10/min"; give {per_minute: N, burst: B} (N calls a minute on average, up to 60000; B at once, 1 to 10000, default 1) or none`},
		{"tools:\n  a:\n    rate_limit: {per_minute: 5, every: 1m}\n",
			`line 3: tools.a.rate_limit has no setting "every"; the settings are per_minute and burst`},
		{"defaults:\n  rate_limit: {writes: none}\n",
			`line 2: defaults.rate_limit: "writes" is not a risk class; give read, write, destructive or privileged`},
		{"defaults:\n  rate_limit: 5\n",
			`line 2: defaults.rate_limit is "5"; give a mapping of risk classes to rate limits, such as {write: {per_minute: 10, burst: 5}, read: none}`},
		{"tools:\n\ta: {}\n",
			`line 2: not valid YAML: found character that cannot start any token (YAML indents with spaces, never tabs)`},
		{"tools: {a: [}\n",
			`not valid YAML: did not find expected node content`},
	} {
		_, err := config.Parse([]byte(tt.yaml))
		var e *config.Error
		if !errors.As(err, &e) || err.Error() != tt.want {
			t.Errorf("%q:\n got %v\nwant %s", tt.yaml, err, tt.want)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(path, []byte("tools:\n  a:\n    expose: perhaps\n"), 0o600)
	_, err := config.Load(path)
	if err == nil || err.Error() != path+`, line 3: tools.a.expose is "perhaps"; a tool rule takes true (show this tool, whatever its class), confirm (show it, and have a person accept each call before it is sent) or false (hide it)` {
		t.Errorf("got %v", err)
	}
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.yaml"): "cannot read the configuration: no such file",
		dir:                                "cannot read the configuration: it is a directory, not a file",
	} {
		if _, err := config.Load(file); err == nil || err.Error() != file+": "+want {
			t.Errorf("%s: got %v, want %s", file, err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "config:") {
		t.Errorf("a package prefix in %v", err)
	}
}

// The mode is tools unless the configuration says otherwise.
func TestMode(t *testing.T) {
	if m := config.Default().Mode; m != config.ModeTools {
		t.Errorf("default mode %q", m)
	}
	for text, want := range map[string]config.Mode{"mode: search\n": config.ModeSearch, "mode: auto\n": config.ModeAuto, "mode:\n": config.ModeTools} {
		c, err := config.Parse([]byte(text))
		if err != nil || c.Mode != want {
			t.Errorf("%q: mode %q (%v), want %q", text, c.Mode, err, want)
		}
	}
}

// TestParseReplay reads the replay window at each level, 0 turning it off.
func TestParseReplay(t *testing.T) {
	c, err := config.Parse([]byte(`
defaults: {replay: 10m}
tags:
  orders: {replay: 1m}
tools:
  createOrder: {replay: 0}
  refundOrder: {deadline: 5s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Replay != 10*time.Minute {
		t.Errorf("defaults.replay %v", c.Replay)
	}
	if r := c.Tags["orders"].Replay; r == nil || *r != time.Minute {
		t.Errorf("tags.orders.replay %v", r)
	}
	if r := c.Tools["createOrder"].Replay; r == nil || *r != 0 {
		t.Errorf("tools.createOrder.replay %v; want 0, set", r)
	}
	if r := c.Tools["refundOrder"].Replay; r != nil {
		t.Errorf("tools.refundOrder.replay %v; want unset", *r)
	}
	if d := config.Default(); d.Replay != config.DefaultReplay || config.DefaultReplay != 5*time.Minute {
		t.Errorf("default replay %v", d.Replay)
	}
}
