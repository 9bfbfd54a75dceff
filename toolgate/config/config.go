// Package config reads toolgate's YAML configuration: the upstream and its
// authentication, defaults, and per-tag and per-tool settings.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// Config is toolgate's configuration.
type Config struct {
	Upstream Upstream
	// Mode is how serve presents the exposed operations: ModeTools (the
	// default), ModeSearch or ModeAuto.
	Mode Mode
	// Deadline bounds each tool call by default: every attempt and every
	// wait. Default 30 s.
	Deadline time.Duration
	// Expose is what is exposed by default: none, read, or read and write
	// (the default). Destructive and privileged tools never are: a tag
	// rule must name their class, or a tool rule enable the tool.
	Expose Exposure
	// ConfirmTimeout bounds the wait for a person's answer when a call
	// needs their confirmation. Default 5 min.
	ConfirmTimeout time.Duration
	// RateLimits are each tool's rate limit by its risk class, where no
	// tag or tool rule sets one: DefaultRateLimits, and whatever
	// defaults.rate_limit changes. A class that is not there is
	// unlimited.
	RateLimits map[risk.Class]RateLimit
	// Replay is how long after a call that changes state was applied an
	// identical call (same tool, arguments and client) gets that call's
	// recorded answer instead of being sent again. Default 5 min; 0 never.
	Replay time.Duration
	Tags   map[string]Rule
	Tools  map[string]Rule
}

// Exposure is the risk classes a default or a rule exposes, and how the
// configuration wrote it, for messages.
type Exposure struct {
	// Classes are the classes shown. Confirm, a subset of them, are those
	// whose every call a person must accept before it is sent.
	Classes Classes
	Confirm Classes
	As      string
}

// Classes is a set of risk classes.
type Classes uint8

// Has reports whether c holds class k.
func (c Classes) Has(k risk.Class) bool { return c&(1<<k) != 0 }

// With returns c with class k.
func (c Classes) With(k risk.Class) Classes { return c | 1<<k }

// ReadWrite is the default: read and write tools.
var ReadWrite = Classes(0).With(risk.Read).With(risk.Write)

// All is every class.
var All = ReadWrite.With(risk.Destructive).With(risk.Privileged)

// String names c's classes, joined with "+", or "none".
func (c Classes) String() string {
	var parts []string
	for k := risk.Read; k <= risk.Privileged; k++ {
		if c.Has(k) {
			parts = append(parts, k.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Mode is how serve presents the exposed operations to a client.
type Mode string

const (
	// ModeTools lists one MCP tool per exposed operation.
	ModeTools Mode = "tools"
	// ModeSearch lists three tools: one that searches the exposed
	// operations, one that describes one of them, and one that calls it.
	ModeSearch Mode = "search"
	// ModeAuto is search mode when the exposed operations are more than
	// a client handles well as tools, and tools mode otherwise.
	ModeAuto Mode = "auto"
)

// ModeChoices says which modes there are, for messages.
const ModeChoices = "give tools (one tool per operation), search (three tools that search, describe and call the operations) or auto (search when there are too many operations for tools)"

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case ModeTools, ModeSearch, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: %s", s, ModeChoices)
}

// Upstream is the API the tools call.
type Upstream struct {
	// URL overrides the document's server: its origin is where the
	// credentials go.
	URL string
	// Auth is sent with every request: the one credential of an API
	// whose document declares none, or one that fits its schemes (a
	// bearer token, an OAuth2 scheme's or an http bearer scheme's).
	Auth Auth
	// Schemes give the credential of each of the document's security
	// schemes that needs one, by the scheme's name.
	Schemes map[string]Auth
	// Server chooses among the document's servers: its index (0 is the
	// first) or its description. Empty is the first.
	Server string
	// Variables are values of the server URLs' variables ({region}),
	// in place of their defaults.
	Variables map[string]string
	// Origins are more origins (scheme://host[:port]) where the document
	// serves some operations of its own (Stripe's uploads at
	// https://files.stripe.com): such an operation is called there, with
	// the credentials, only when its origin is listed, and at the
	// upstream otherwise.
	Origins []string
}

// Kinds of authentication, the values of Auth.Type.
const (
	// AuthNone sends no credential; for a scheme, it says that none is
	// needed there (a test server, a proxy that adds it).
	AuthNone = "none"
	// AuthBearer sends the secret as "Authorization: Bearer SECRET": an
	// http bearer scheme's token, or an OAuth2 token obtained elsewhere.
	AuthBearer = "bearer"
	// AuthBasic sends the secret, user:password, as HTTP basic
	// authentication (RFC 7617).
	AuthBasic = "basic"
	// AuthHeader sends the secret as the header Header.
	AuthHeader = "header"
	// AuthAPIKey sends the secret where an apiKey scheme says: a header,
	// a query parameter or a cookie (for upstream.auth, In and Name).
	AuthAPIKey = "api_key"
	// AuthOAuth2 gets a token by OAuth2's client credentials flow, from
	// the scheme's token URL or TokenURL, with ClientID and the secret,
	// and sends it as a bearer token; it is kept until shortly before it
	// expires.
	AuthOAuth2 = "oauth2"
	// AuthForward sends the bearer token the MCP client presented to
	// toolgate over Streamable HTTP, call by call.
	AuthForward = "forward"
)

// AuthTypes says which kinds of authentication there are, for messages.
const AuthTypes = "none, bearer, basic, header, api_key, oauth2 or forward"

// Auth says how to authenticate to the upstream. The secret itself is
// read, when serving starts, from the environment variable Env or from
// File, which only its owner may read, and never written anywhere.
type Auth struct {
	// Type is one of AuthNone, AuthBearer, AuthBasic, AuthHeader,
	// AuthAPIKey, AuthOAuth2 and AuthForward.
	Type string
	// Env and File say where the secret is: exactly one of them, for
	// every type but none and forward. For oauth2 it is the client's
	// secret.
	Env, File string
	// Header names the header for type header.
	Header string
	// In and Name say where an API key goes (header, query or cookie),
	// for an api_key that no scheme of the document places.
	In, Name string
	// ClientID, TokenURL and Scopes are oauth2's: the client's id, the
	// token endpoint when the scheme's is not to be used, and the scopes
	// to ask for instead of those the operation requires.
	ClientID, TokenURL string
	Scopes             []string
	// Line is where the setting is in the file, for messages; 0 when the
	// file does not give it. upstream.auth: {type: none}, written, says
	// that no scheme of the document needs a credential (a mock, or a
	// proxy that adds them).
	Line int
}

// Secret says where the secret is, for messages: "$NAME" or "the file
// PATH".
func (a Auth) Secret() string {
	if a.File != "" {
		return "the file " + a.File
	}
	return "$" + a.Env
}

// NeedsSecret reports whether the type reads a secret from Env or File.
func (a Auth) NeedsSecret() bool {
	return a.Type != AuthNone && a.Type != AuthForward && a.Type != ""
}

// Rule is the settings of a tag or a tool; unset fields leave the decision
// to the next level (tool over tag over default).
type Rule struct {
	// Expose, when set, is what the rule exposes. For a tag, the classes
	// of its tools that are shown, and those shown only with a person's
	// confirmation of each call: true is read+write, false none, and
	// destructive or privileged tools only when the rule names their
	// class. For a tool, true shows it whatever its class (enabling a
	// destructive or privileged tool is a per-tool act), confirm shows it
	// with a person's confirmation of each call, and false hides it.
	Expose *Exposure
	// Risk overrides the class the engine decided.
	Risk *risk.Class
	// Retry sets how a tool may be retried once sent; only a tool's own
	// rule may opt in.
	Retry *retry.Mode
	// Deadline bounds the tool's calls.
	Deadline time.Duration
	// ConfirmTimeout bounds the wait for a person's confirmation.
	ConfirmTimeout time.Duration
	// Guard says which calls an open call of the tool holds back; only a
	// tool's own rule may set it. Empty means GuardResource.
	Guard Guard
	// RateLimit, when set, limits the calls of the tool, or those of the
	// tag's tools together.
	RateLimit *RateLimit
	// Replay, when set, is the tool's replay window (Config.Replay); 0
	// turns replays off for it.
	Replay *time.Duration
}

// RateLimit is a token bucket: calls come at most PerMinute a minute on
// average, and Burst at once. The zero value is no limit.
type RateLimit struct {
	PerMinute float64
	Burst     int
}

// Unlimited reports whether r limits nothing.
func (r RateLimit) Unlimited() bool { return r.PerMinute <= 0 }

// String says what r allows: "10 a minute, 5 at once", or "unlimited".
func (r RateLimit) String() string {
	if r.Unlimited() {
		return "unlimited"
	}
	return fmt.Sprintf("%s a minute, %d at once", strconv.FormatFloat(r.PerMinute, 'f', -1, 64), r.Burst)
}

// DefaultRateLimits are the rate limits of tools by class when the
// configuration sets none: a write 10 calls a minute, 5 at once; a
// destructive or privileged tool 3 a minute, 2 at once; reads unlimited.
// An agent in a loop is stopped within seconds, and a person working
// through an agent is never held back.
func DefaultRateLimits() map[risk.Class]RateLimit {
	return map[risk.Class]RateLimit{
		risk.Write:       {PerMinute: 10, Burst: 5},
		risk.Destructive: {PerMinute: 3, Burst: 2},
		risk.Privileged:  {PerMinute: 3, Burst: 2},
	}
}

// Bounds of a rate limit's settings.
const (
	maxPerMinute = 60000 // 1000 calls a second
	maxBurst     = 10000
)

// Guard says which calls a call that changes state holds back while its
// outcome is open (in flight, or ambiguous).
type Guard string

const (
	// GuardResource refuses every call of the tool on the same resource:
	// the same path parameters, whatever the other arguments. It is the
	// default: an agent that adds or changes one optional field after an
	// ambiguous call is still retrying it.
	GuardResource Guard = "resource"
	// GuardIdentical refuses only a call with the same arguments, for
	// tools where different arguments are certainly different effects.
	GuardIdentical Guard = "identical"
)

// ParseGuard returns the guard named s.
func ParseGuard(s string) (Guard, error) {
	switch g := Guard(strings.TrimSpace(s)); g {
	case GuardResource, GuardIdentical:
		return g, nil
	}
	return "", fmt.Errorf("%q is not a guard: use resource (one open call per tool and resource, the default) or identical (one open call per tool and arguments)", s)
}

// Error is a mistake in a configuration: where it is, and what to write
// instead.
type Error struct {
	// File is the configuration file, when it was read from one.
	File string
	// Line is where the mistake is, or 0 when that is not known.
	Line int
	// Field is the setting, such as tools.createOrder.expose, or "" for
	// the whole configuration.
	Field string
	// Msg says what is wrong and what is expected; it names the field.
	Msg string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		if where != "" {
			where += ", "
		}
		where += "line " + strconv.Itoa(e.Line)
	}
	if where == "" {
		return e.Msg
	}
	return where + ": " + e.Msg
}

// Default is the configuration without a file: 30 s deadlines, no
// authentication, read and write tools exposed, nothing destructive or
// privileged, and 5 min for a person to confirm a call.
func Default() *Config {
	return &Config{Deadline: 30 * time.Second, ConfirmTimeout: 5 * time.Minute, Replay: DefaultReplay, Upstream: Upstream{Auth: Auth{Type: AuthNone}}, Mode: ModeTools,
		Expose: Exposure{Classes: ReadWrite, As: "read+write"}, RateLimits: DefaultRateLimits()}
}

// Load reads the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read the configuration: " + readProblem(err)}
	}
	c, err := Parse(data)
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	return c, err
}

// readProblem says why a file could not be read, without the system
// call's name.
func readProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.EISDIR):
		return "it is a directory, not a file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse reads a configuration from YAML. Unknown fields are errors: a
// misspelt "expose" must not silently leave a tool hidden, or shown.
func Parse(data []byte) (*Config, error) {
	return parse(data, nil)
}

// parse is Parse, telling offered, when it is not nil, the path of every
// setting that a mapping it reads may hold.
func parse(data []byte, offered func(path string)) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	p := &parser{cfg: Default(), offered: offered}
	if len(doc.Content) > 0 {
		if err := p.root(doc.Content[0]); err != nil {
			return nil, err
		}
	}
	if err := p.checkAuth(); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError rewrites the YAML parser's error: the line, and a hint for
// the commonest mistake.
func syntaxError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{Msg: "not valid YAML: " + msg}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "not valid YAML: " + m[2]
		if lines := bytes.Split(data, []byte("\n")); e.Line <= len(lines) && bytes.ContainsRune(lines[e.Line-1], '\t') {
			e.Msg += " (YAML indents with spaces, never tabs)"
		}
	}
	return e
}

// parser reads the YAML tree into a Config, checking each setting where
// it is, so that a mistake is reported with its line.
type parser struct {
	cfg     *Config
	offered func(path string) // see parse
}

// field is a setting a mapping may hold, and how to read its value.
type field struct {
	name string
	read func(v *yaml.Node, path string) error
}

func (p *parser) root(n *yaml.Node) error {
	return p.mapping(n, "", "upstream, mode, defaults, tags and tools", []field{
		{"upstream", p.upstream},
		{"mode", func(v *yaml.Node, path string) error {
			const want = ModeChoices
			var s string
			if err := str(v, path, want, &s); err != nil || s == "" {
				return err
			}
			m, err := ParseMode(s)
			if err != nil {
				return wrong(v, path, want)
			}
			p.cfg.Mode = m
			return nil
		}},
		{"defaults", func(v *yaml.Node, path string) error {
			return p.mapping(v, path, "{deadline: 30s, expose: read+write}", []field{
				{"deadline", func(v *yaml.Node, path string) error { return duration(v, path, &p.cfg.Deadline) }},
				{"confirm_timeout", func(v *yaml.Node, path string) error { return duration(v, path, &p.cfg.ConfirmTimeout) }},
				{"rate_limit", p.classRateLimits},
				{"replay", func(v *yaml.Node, path string) error {
					d, set, err := window(v, path)
					if set {
						p.cfg.Replay = d
					}
					return err
				}},
				{"expose", func(v *yaml.Node, path string) error {
					e, err := p.exposure(v, path, defaultRule)
					if e != nil {
						p.cfg.Expose = *e
					}
					return err
				}},
			})
		}},
		{"tags", func(v *yaml.Node, path string) error { return p.rules(v, path, false, &p.cfg.Tags) }},
		{"tools", func(v *yaml.Node, path string) error { return p.rules(v, path, true, &p.cfg.Tools) }},
	})
}

func (p *parser) upstream(n *yaml.Node, path string) error {
	u := &p.cfg.Upstream
	return p.mapping(n, path, "{url: https://api.example.com}", []field{
		{"url", func(v *yaml.Node, path string) error {
			return httpURL(v, path, "give an http or https URL, such as https://api.example.com", &u.URL)
		}},
		{"auth", func(v *yaml.Node, path string) error {
			return p.auth(v, path, &u.Auth, false)
		}},
		{"schemes", func(v *yaml.Node, path string) error {
			v = deref(v)
			if isNull(v) {
				return nil
			}
			if v.Kind != yaml.MappingNode {
				return wrong(v, path, "give a mapping of the document's security schemes to their credentials, such as api_key: {type: api_key, env: API_KEY}")
			}
			u.Schemes = map[string]Auth{}
			return entries(v, path, func(name string, val *yaml.Node, where string) error {
				var a Auth
				err := p.auth(val, where, &a, true)
				u.Schemes[name] = a
				return err
			})
		}},
		{"server", func(v *yaml.Node, path string) error {
			return str(v, path, "give the index of one of the document's servers (0 is the first) or its description", &u.Server)
		}},
		{"origins", func(v *yaml.Node, path string) error {
			v = deref(v)
			if isNull(v) {
				return nil
			}
			const want = "give a list of origins, such as [https://files.example.com]"
			if v.Kind != yaml.SequenceNode {
				return wrong(v, path, want)
			}
			for _, item := range v.Content {
				item = deref(item)
				o, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(item.Value), "/"))
				if item.Kind != yaml.ScalarNode || err != nil || (o.Scheme != "http" && o.Scheme != "https") || o.Host == "" ||
					o.Path != "" || o.RawQuery != "" || o.User != nil {
					return wrong(item, path, "give each origin as scheme://host[:port], such as https://files.example.com, without a path")
				}
				u.Origins = append(u.Origins, o.Scheme+"://"+o.Host)
			}
			return nil
		}},
		{"variables", func(v *yaml.Node, path string) error {
			v = deref(v)
			if isNull(v) {
				return nil
			}
			const want = "give a mapping of the servers' variables to their values, such as region: eu"
			if v.Kind != yaml.MappingNode {
				return wrong(v, path, want)
			}
			u.Variables = map[string]string{}
			return entries(v, path, func(name string, val *yaml.Node, where string) error {
				if val = deref(val); val.Kind != yaml.ScalarNode {
					return wrong(val, where, want)
				}
				u.Variables[name] = strings.TrimSpace(val.Value)
				return nil
			})
		}},
	})
}

// auth reads a credential's settings at path into a and checks them
// together; forScheme says that a document's scheme places it.
func (p *parser) auth(n *yaml.Node, path string, a *Auth, forScheme bool) error {
	a.Line = deref(n).Line
	err := p.mapping(n, path, "{type: bearer, env: API_TOKEN}", []field{
		{"type", func(v *yaml.Node, path string) error {
			return choice(v, path, "give "+AuthTypes, &a.Type, AuthNone, AuthBearer, AuthBasic, AuthHeader, AuthAPIKey, AuthOAuth2, AuthForward)
		}},
		textField("env", "give the name of the environment variable that holds the secret, such as API_TOKEN", &a.Env),
		textField("file", "give the path of a file that holds the secret, readable by its owner only (chmod 600)", &a.File),
		textField("header", "give the name of the header that carries the secret, such as X-API-Key", &a.Header),
		{"in", func(v *yaml.Node, path string) error {
			return choice(v, path, "give header, query or cookie", &a.In, "header", "query", "cookie")
		}},
		textField("name", "give the name of the header, query parameter or cookie that carries the key", &a.Name),
		textField("client_id", "give the OAuth2 client's id", &a.ClientID),
		{"token_url", func(v *yaml.Node, path string) error {
			return httpURL(v, path, "give the token endpoint's https URL, such as https://auth.example.com/oauth/token", &a.TokenURL)
		}},
		{"scopes", func(v *yaml.Node, path string) error {
			v = deref(v)
			switch {
			case isNull(v):
				return nil
			case v.Kind == yaml.ScalarNode:
				a.Scopes = strings.Fields(v.Value)
				return nil
			case v.Kind != yaml.SequenceNode:
				return wrong(v, path, "give the scopes as a list, such as [read, write]")
			}
			for _, item := range v.Content {
				if item = deref(item); item.Kind != yaml.ScalarNode {
					return wrong(item, path, "give the scopes as a list of names, such as [read, write]")
				}
				a.Scopes = append(a.Scopes, strings.TrimSpace(item.Value))
			}
			return nil
		}},
	})
	if err != nil {
		return err
	}
	if forScheme && a.Type == "" {
		return &Error{Line: a.Line, Field: path + ".type", Msg: path + " needs a type: " + AuthTypes}
	}
	return checkAuth(*a, path, forScheme)
}

// checkAuth checks a credential's settings together.
func checkAuth(a Auth, path string, forScheme bool) error {
	fail := func(field, format string, args ...any) error {
		where := path
		if field != "" {
			where += "." + field
		}
		return &Error{Line: a.Line, Field: where, Msg: path + ": " + fmt.Sprintf(format, args...)}
	}
	secretOnly := map[string]bool{"header": a.Header != "", "in": a.In != "", "name": a.Name != "", "client_id": a.ClientID != "",
		"token_url": a.TokenURL != "", "scopes": a.Scopes != nil}
	allowed := map[string][]string{AuthHeader: {"header"}, AuthAPIKey: {"in", "name"}, AuthOAuth2: {"client_id", "token_url", "scopes"}}[a.Type]
	for _, f := range []string{"header", "in", "name", "client_id", "token_url", "scopes"} {
		if secretOnly[f] && !slices.Contains(allowed, f) {
			return fail(f, "%s is for type %s, not %s", f, typeOf(f), orNone(a.Type))
		}
	}
	if forScheme && (a.In != "" || a.Name != "") {
		return fail("", "the document's scheme says where its key goes; in and name are for upstream.auth, which no scheme places")
	}
	switch {
	case !a.NeedsSecret() && (a.Env != "" || a.File != ""):
		return fail("", "type %s reads no secret: remove env and file", orNone(a.Type))
	case a.NeedsSecret() && a.Env == "" && a.File == "":
		return fail("", "type %s needs the secret: env, the environment variable that holds it, or file, a file only its owner may read", a.Type)
	case a.Env != "" && a.File != "":
		return fail("", "give env or file, not both: the secret comes from one place")
	case a.Type == AuthHeader && a.Header == "":
		return fail("header", "type header needs header, the header that carries the secret")
	case a.Type == AuthAPIKey && !forScheme && (a.In == "" || a.Name == ""):
		return fail("", "type api_key needs in (header, query or cookie) and name, where the key goes, unless a scheme of the document says so (upstream.schemes)")
	case a.Type == AuthOAuth2 && a.ClientID == "":
		return fail("client_id", "type oauth2 needs client_id, the OAuth2 client's id (its secret comes from env or file)")
	case a.Type == AuthOAuth2 && !forScheme && a.TokenURL == "":
		return fail("token_url", "type oauth2 needs token_url, the token endpoint, unless a scheme of the document gives it (upstream.schemes)")
	}
	return nil
}

// typeOf names the type a credential setting belongs to.
func typeOf(field string) string {
	switch field {
	case "header":
		return AuthHeader
	case "in", "name":
		return AuthAPIKey
	}
	return AuthOAuth2
}

func orNone(t string) string {
	if t == "" {
		return AuthNone
	}
	return t
}

// checkAuth fills in upstream.auth's default.
func (p *parser) checkAuth() error {
	if a := &p.cfg.Upstream.Auth; a.Type == "" {
		a.Type = AuthNone
	}
	return nil
}

// rules reads the tags or tools section: a mapping of names to settings.
func (p *parser) rules(n *yaml.Node, path string, isTool bool, dst *map[string]Rule) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		want := "give a mapping of tag names to their settings, such as orders: {expose: true}"
		if isTool {
			want = "give a mapping of tool names to their settings, such as createOrder: {expose: true}"
		}
		return wrong(n, path, want)
	}
	*dst = make(map[string]Rule, len(n.Content)/2)
	return entries(n, path, func(name string, v *yaml.Node, where string) error {
		r, err := p.rule(v, where, isTool)
		(*dst)[name] = r
		return err
	})
}

// entries reads n, a mapping of names to settings at path, with read,
// refusing a name given twice.
func entries(n *yaml.Node, path string, read func(name string, v *yaml.Node, where string) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		where := path + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Line: k.Line, Field: where, Msg: fmt.Sprintf("%s is given twice (first on line %d)", where, first)}
		}
		seen[k.Value] = k.Line
		if err := read(k.Value, v, where); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) rule(n *yaml.Node, path string, isTool bool) (Rule, error) {
	var r Rule
	kind := tagRule
	if isTool {
		kind = toolRule
	}
	err := p.mapping(n, path, "{expose: true}", []field{
		{"expose", func(v *yaml.Node, path string) (err error) {
			r.Expose, err = p.exposure(v, path, kind)
			return err
		}},
		{"risk", func(v *yaml.Node, path string) error {
			const want = "give read, write, destructive or privileged"
			var s string
			if err := str(v, path, want, &s); err != nil || s == "" {
				return err
			}
			c, err := risk.Parse(s)
			if err != nil {
				return wrong(v, path, want)
			}
			r.Risk = &c
			return nil
		}},
		{"retry", func(v *yaml.Node, path string) error {
			const want = "give by_method, opted_in or not_sent_only"
			var s string
			if err := str(v, path, want, &s); err != nil || s == "" {
				return err
			}
			if !isTool {
				return &Error{Line: v.Line, Field: path, Msg: path + ": retries are set per tool, never for a whole tag: opting in must name the operation"}
			}
			m, err := retry.ParseMode(s)
			if err != nil {
				return wrong(v, path, want)
			}
			r.Retry = &m
			return nil
		}},
		{"deadline", func(v *yaml.Node, path string) error { return duration(v, path, &r.Deadline) }},
		{"confirm_timeout", func(v *yaml.Node, path string) error { return duration(v, path, &r.ConfirmTimeout) }},
		{"rate_limit", func(v *yaml.Node, path string) (err error) {
			r.RateLimit, err = p.rateLimit(v, path)
			return err
		}},
		{"replay", func(v *yaml.Node, path string) error {
			d, set, err := window(v, path)
			if set {
				r.Replay = &d
			}
			return err
		}},
		{"guard", func(v *yaml.Node, path string) error {
			const want = "give resource (one open call per tool and resource, the default) or identical (one open call per tool and arguments)"
			var s string
			if err := str(v, path, want, &s); err != nil || s == "" {
				return err
			}
			if !isTool {
				return &Error{Line: v.Line, Field: path, Msg: fmt.Sprintf("%s is %s; the guard is set per tool, never for a whole tag: "+
					"give it to each tool that needs it, such as tools.NAME.guard: %s", path, describe(v), s)}
			}
			g, err := ParseGuard(s)
			if err != nil {
				return wrong(v, path, want)
			}
			r.Guard = g
			return nil
		}},
	})
	return r, err
}

// rateLimitWant is what a rate limit may be, for messages.
const rateLimitWant = "give {per_minute: N, burst: B} (N calls a minute on average, up to 60000; B at once, 1 to 10000, default 1) or none"

// classRateLimits reads defaults.rate_limit: a mapping of risk classes to
// their tools' rate limits, which replace the built-in ones class by
// class.
func (p *parser) classRateLimits(n *yaml.Node, path string) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return wrong(n, path, "give a mapping of risk classes to rate limits, such as {write: {per_minute: 10, burst: 5}, read: none}")
	}
	return entries(n, path, func(name string, v *yaml.Node, where string) error {
		k, err := risk.Parse(name)
		if err != nil {
			return &Error{Line: v.Line, Field: where, Msg: fmt.Sprintf("%s: %q is not a risk class; give read, write, destructive or privileged", path, name)}
		}
		r, err := p.rateLimit(v, where)
		if err != nil || r == nil {
			return err
		}
		p.cfg.RateLimits[k] = *r
		return nil
	})
}

// rateLimit reads a rate limit: {per_minute: N, burst: B}, or none (also
// false, or 0) for no limit. An empty value leaves it unset.
func (p *parser) rateLimit(n *yaml.Node, path string) (*RateLimit, error) {
	n = deref(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind == yaml.ScalarNode {
		if v := strings.ToLower(strings.TrimSpace(n.Value)); v == "none" || v == "false" || v == "0" || v == "unlimited" {
			return &RateLimit{}, nil
		}
		return nil, wrong(n, path, rateLimitWant)
	}
	r := &RateLimit{Burst: 1}
	line := n.Line
	err := p.mapping(n, path, "{per_minute: 10, burst: 5}", []field{
		{"per_minute", func(v *yaml.Node, path string) error {
			v = deref(v)
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Value), 64)
			if v.Kind != yaml.ScalarNode || err != nil || f <= 0 || f > maxPerMinute {
				return wrong(v, path, "give the calls a minute, a number above 0 and up to 60000, such as 10 or 0.5")
			}
			r.PerMinute = f
			return nil
		}},
		{"burst", func(v *yaml.Node, path string) error {
			v = deref(v)
			b, err := strconv.Atoi(strings.TrimSpace(v.Value))
			if v.Kind != yaml.ScalarNode || err != nil || b < 1 || b > maxBurst {
				return wrong(v, path, "give how many calls may come at once, a whole number from 1 to 10000")
			}
			r.Burst = b
			return nil
		}},
	})
	if err != nil {
		return nil, err
	}
	if r.PerMinute == 0 {
		return nil, &Error{Line: line, Field: path, Msg: path + " needs per_minute, the calls a minute on average; " + rateLimitWant}
	}
	return r, nil
}

// ruleKind is where an expose setting stands, which decides what it may say.
type ruleKind int

const (
	defaultRule ruleKind = iota // none, read or read+write, or show and confirm
	tagRule                     // true, false, classes, or show and confirm
	toolRule                    // true, false or confirm
)

// exposure reads an expose setting: true or false; a class or classes
// joined with "+" ("read+write"), "none", or a list of classes; a mapping
// of the classes to show and those to show with a person's confirmation
// of each call ({show: [read], confirm: [write]}); or, for a tool,
// confirm. An empty value leaves the setting unset.
func (p *parser) exposure(n *yaml.Node, path string, kind ruleKind) (*Exposure, error) {
	n = deref(n)
	if isNull(n) {
		return nil, nil
	}
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, wrong(n, path, "give true or false")
		}
		e := &Exposure{As: strconv.FormatBool(b)}
		switch {
		case b && kind == toolRule:
			e.Classes = All
		case b:
			e.Classes = ReadWrite
		}
		return e, nil
	case kind == toolRule && n.Kind == yaml.ScalarNode && strings.EqualFold(strings.TrimSpace(n.Value), "confirm"):
		return &Exposure{Classes: All, Confirm: All, As: "confirm"}, nil
	case kind == toolRule:
		return nil, wrong(n, path, "a tool rule takes true (show this tool, whatever its class), "+
			"confirm (show it, and have a person accept each call before it is sent) or false (hide it)")
	case n.Kind == yaml.MappingNode:
		return p.confirmedExposure(n, path, kind)
	}
	c, as, err := classList(n, path, kind)
	if err != nil {
		return nil, err
	}
	return &Exposure{Classes: c, As: as}, nil
}

// confirmedExposure reads the mapping form of an expose setting: the
// classes to show, and those to show with a person's confirmation.
func (p *parser) confirmedExposure(n *yaml.Node, path string, kind ruleKind) (*Exposure, error) {
	var show, confirm Classes
	var confirmLine int
	var keys []string
	as := map[string]string{}
	// A key read again, through a merge (<<), replaces what it held.
	read := func(key string, dst *Classes) func(v *yaml.Node, path string) error {
		return func(v *yaml.Node, path string) error {
			c, written, err := classList(v, path, kind)
			if err != nil {
				return err
			}
			if _, seen := as[key]; !seen {
				keys = append(keys, key)
			}
			as[key], *dst = written, c
			if key == "confirm" {
				confirmLine = v.Line
			}
			return nil
		}
	}
	const advice = ": show lists the classes shown, confirm the classes shown with a person's confirmation of each call, " +
		"such as {show: [read], confirm: [write]}"
	if err := p.mappingAdvised(n, path, "{show: [read], confirm: [write]}", advice, []field{
		{"show", read("show", &show)},
		{"confirm", read("confirm", &confirm)},
	}); err != nil {
		return nil, err
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + as[k]
	}
	e := &Exposure{Classes: show | confirm, Confirm: confirm, As: "{" + strings.Join(parts, ", ") + "}"}
	if both := show & confirm; both != 0 {
		return nil, &Error{Line: confirmLine, Field: path, Msg: fmt.Sprintf("%s is %s; %s is both in show and in confirm: list it in one of them", path, e.As, both)}
	}
	return e, nil
}

// classList reads a class, classes joined with "+", "none", or a list of
// classes, and how the configuration wrote it. An empty value is none.
func classList(n *yaml.Node, path string, kind ruleKind) (Classes, string, error) {
	n = deref(n)
	var names []*yaml.Node
	var as string
	switch n.Kind {
	case yaml.ScalarNode:
		as = n.Value
		if v := strings.TrimSpace(strings.ToLower(n.Value)); v != "none" && !isNull(n) {
			for _, name := range strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' || r == ' ' }) {
				names = append(names, &yaml.Node{Kind: yaml.ScalarNode, Value: name, Line: n.Line})
			}
		}
	case yaml.SequenceNode:
		var parts []string
		for _, item := range n.Content {
			if item = deref(item); item.Kind != yaml.ScalarNode {
				return 0, "", &Error{Line: item.Line, Field: path, Msg: fmt.Sprintf("%s lists %s; list the classes by name: read, write, destructive or privileged", path, describe(item))}
			}
			names = append(names, item)
			parts = append(parts, item.Value)
		}
		as = "[" + strings.Join(parts, ", ") + "]"
	default:
		return 0, "", wrong(n, path, "give none, a class, classes joined with + such as read+write, or a list of classes such as [read, write]")
	}
	var c Classes
	for _, name := range names {
		if strings.EqualFold(strings.TrimSpace(name.Value), "confirm") {
			return 0, "", &Error{Line: name.Line, Field: path, Msg: fmt.Sprintf("%s %s; confirm alone is for a tool: "+
				"a tag or the default names the classes a person confirms, such as {show: [read], confirm: [write]}", path, writes(as, name.Value))}
		}
		k, err := risk.Parse(name.Value)
		if err != nil {
			return 0, "", &Error{Line: name.Line, Field: path, Msg: fmt.Sprintf("%s %s, which is not a risk class; give read, write, destructive or privileged (or none)", path, writes(as, name.Value))}
		}
		if kind == defaultRule && k > risk.Write {
			return 0, "", &Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("%s is %q; the default exposes none, read or read+write: "+
				"expose %s tools by tag (expose: [read, write, %s]) or one by one (tools.NAME.expose: confirm or true)", path, as, k, k)}
		}
		c = c.With(k)
	}
	return c, as, nil
}

// writes says how a setting written as names one of its classes: "is
// "confirm"" when that is the whole value, else "names "confirm"".
func writes(as, name string) string {
	if strings.EqualFold(strings.TrimSpace(as), strings.TrimSpace(name)) {
		return "is " + strconv.Quote(as)
	}
	return "names " + strconv.Quote(name)
}

// mapping reads n, a mapping whose keys must be among fields; example
// shows what one looks like. An empty value is an empty mapping.
func (p *parser) mapping(n *yaml.Node, path, example string, fields []field) error {
	return p.mappingAdvised(n, path, example, "", fields)
}

// mappingAdvised is mapping, with advice that follows the list of the
// settings when a key is not one of them.
func (p *parser) mappingAdvised(n *yaml.Node, path, example, advice string, fields []field) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
		if p.offered != nil {
			p.offered(join(path, f.name))
		}
	}
	if n.Kind != yaml.MappingNode {
		if path == "" {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("the configuration is %s; give a mapping of its settings: %s", describe(n), example)}
		}
		return wrong(n, path, "give a mapping, such as "+example)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag == "!!merge" { // <<: *defaults
			if err := p.merge(v, path, example, advice, fields); err != nil {
				return err
			}
			continue
		}
		where := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			return &Error{Line: k.Line, Field: where, Msg: fmt.Sprintf("%s is given twice (first on line %d)", where, first)}
		}
		seen[k.Value] = k.Line
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == k.Value })
		if i < 0 {
			return &Error{Line: k.Line, Field: where, Msg: unknownField(path, k.Value, names) + advice}
		}
		if err := fields[i].read(v, where); err != nil {
			return err
		}
	}
	return nil
}

// merge reads the mappings a merge key names as if they were written in
// place.
func (p *parser) merge(v *yaml.Node, path, example, advice string, fields []field) error {
	v = deref(v)
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			if err := p.mappingAdvised(m, path, example, advice, fields); err != nil {
				return err
			}
		}
		return nil
	}
	return p.mappingAdvised(v, path, example, advice, fields)
}

// unknownField says that a mapping has no field name, suggesting the
// closest one.
func unknownField(path, name string, names []string) string {
	var b strings.Builder
	if path == "" {
		fmt.Fprintf(&b, "there is no setting %q", name)
	} else {
		fmt.Fprintf(&b, "%s has no setting %q", path, name)
	}
	best, bestDistance := "", 3
	for _, n := range names {
		if d := distance(strings.ToLower(name), n); d < bestDistance {
			best, bestDistance = n, d
		}
	}
	if best != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", best)
	}
	fmt.Fprintf(&b, "; the settings are %s", list(names))
	return b.String()
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// list joins names as a sentence does: "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// str reads a scalar as text; an empty value leaves dst unset.
func str(n *yaml.Node, path, want string, dst *string) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return wrong(n, path, want)
	}
	*dst = strings.TrimSpace(n.Value)
	return nil
}

// textField is a setting whose value is text, read into dst.
func textField(name, want string, dst *string) field {
	return field{name, func(v *yaml.Node, path string) error { return str(v, path, want, dst) }}
}

// httpURL reads an absolute http or https URL; an empty value leaves dst
// unset.
func httpURL(n *yaml.Node, path, want string, dst *string) error {
	if err := str(n, path, want, dst); err != nil || *dst == "" {
		return err
	}
	if u, err := url.Parse(*dst); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return wrong(n, path, want)
	}
	return nil
}

// choice reads a scalar that must be one of choices; an empty value
// leaves dst unset.
func choice(n *yaml.Node, path, want string, dst *string, choices ...string) error {
	if err := str(n, path, want, dst); err != nil {
		return err
	}
	if *dst == "" || slices.Contains(choices, *dst) {
		return nil
	}
	return wrong(n, path, want)
}

func duration(n *yaml.Node, path string, dst *time.Duration) error {
	const want = "give a duration such as 30s or 2m, up to 1h"
	var s string
	if err := str(n, path, want, &s); err != nil || s == "" {
		return err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > time.Hour {
		return wrong(n, path, want)
	}
	*dst = d
	return nil
}

// DefaultReplay is the replay window of a tool that changes state when the
// configuration gives none: a client that re-issues a call whose answer it
// lost does so within seconds; a few minutes covers a slow agent too.
const DefaultReplay = 5 * time.Minute

// window reads a replay window, a duration up to a day or 0 for none, and
// whether one is given.
func window(n *yaml.Node, path string) (time.Duration, bool, error) {
	const want = "give a duration such as 5m, up to 24h, or 0 to never replay"
	var s string
	if err := str(n, path, want, &s); err != nil || s == "" {
		return 0, false, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 24*time.Hour {
		return 0, false, wrong(n, path, want)
	}
	return d, true, nil
}

// wrong reports a value that does not fit: the field, the value as
// written, and what to write instead.
func wrong(n *yaml.Node, path, want string) error {
	return &Error{Line: n.Line, Field: path, Msg: fmt.Sprintf("%s is %s; %s", path, describe(n), want)}
}

// describe names a value as the user wrote it.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 60 {
		v = v[:57] + "..."
	}
	return strconv.Quote(v)
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
