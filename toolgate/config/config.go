// Package config reads toolgate's YAML configuration: the upstream and its
// authentication, defaults, and per-tag and per-tool settings.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// Config is toolgate's configuration.
type Config struct {
	Upstream Upstream
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
	Tags           map[string]Rule
	Tools          map[string]Rule
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

// Upstream is the API the tools call.
type Upstream struct {
	// URL overrides the document's first server.
	URL  string
	Auth Auth
}

// Auth says how to authenticate to the upstream. The secret itself is read
// from the environment variable Env and never written anywhere.
type Auth struct {
	// Type is "none", "bearer", "header" or "basic".
	Type string
	Env  string
	// Header names the header for type "header".
	Header string
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
}

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

type fileRule struct {
	Expose         yaml.Node `yaml:"expose"` // true, false, confirm, classes: see exposure
	Risk           string    `yaml:"risk"`
	Retry          string    `yaml:"retry"`
	Deadline       string    `yaml:"deadline"`
	ConfirmTimeout string    `yaml:"confirm_timeout"`
	Guard          string    `yaml:"guard"`
}

type file struct {
	Upstream struct {
		URL  string `yaml:"url"`
		Auth struct {
			Type   string `yaml:"type"`
			Env    string `yaml:"env"`
			Header string `yaml:"header"`
		} `yaml:"auth"`
	} `yaml:"upstream"`
	Defaults struct {
		Deadline       string    `yaml:"deadline"`
		ConfirmTimeout string    `yaml:"confirm_timeout"`
		Expose         yaml.Node `yaml:"expose"` // true, false, classes: see exposure
	} `yaml:"defaults"`
	Tags  map[string]fileRule `yaml:"tags"`
	Tools map[string]fileRule `yaml:"tools"`
}

// Default is the configuration without a file: 30 s deadlines, no
// authentication, read and write tools exposed, nothing destructive or
// privileged, and 5 min for a person to confirm a call.
func Default() *Config {
	return &Config{Deadline: 30 * time.Second, ConfirmTimeout: 5 * time.Minute, Upstream: Upstream{Auth: Auth{Type: "none"}},
		Expose: Exposure{Classes: ReadWrite, As: "read+write"}}
}

// Load reads the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Parse reads a configuration from YAML. Unknown fields are errors: a
// misspelt "expose" must not silently leave a tool hidden, or shown.
func Parse(data []byte) (*Config, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("config: %v", err)
	}
	c := Default()
	c.Upstream.URL = f.Upstream.URL
	if c.Upstream.URL != "" {
		u, err := url.Parse(c.Upstream.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("config: upstream.url %q: give an http or https URL", c.Upstream.URL)
		}
	}
	a := f.Upstream.Auth
	c.Upstream.Auth = Auth{Type: a.Type, Env: a.Env, Header: a.Header}
	switch a.Type {
	case "", "none":
		c.Upstream.Auth.Type = "none"
	case "bearer", "basic":
		if a.Env == "" {
			return nil, fmt.Errorf("config: upstream.auth: type %s needs env, the variable that holds the secret", a.Type)
		}
	case "header":
		if a.Env == "" || a.Header == "" {
			return nil, errors.New("config: upstream.auth: type header needs env and header")
		}
	default:
		return nil, fmt.Errorf("config: upstream.auth.type %q: use none, bearer, header or basic", a.Type)
	}
	if f.Defaults.Deadline != "" {
		d, err := deadline(f.Defaults.Deadline, "defaults.deadline")
		if err != nil {
			return nil, err
		}
		c.Deadline = d
	}
	if f.Defaults.ConfirmTimeout != "" {
		d, err := deadline(f.Defaults.ConfirmTimeout, "defaults.confirm_timeout")
		if err != nil {
			return nil, err
		}
		c.ConfirmTimeout = d
	}
	if n := &f.Defaults.Expose; n.Kind != 0 {
		e, err := exposure(n, "defaults.expose", defaultRule)
		if err != nil {
			return nil, err
		}
		c.Expose = *e
	}
	var err error
	if c.Tags, err = rules(f.Tags, "tags", false); err != nil {
		return nil, err
	}
	if c.Tools, err = rules(f.Tools, "tools", true); err != nil {
		return nil, err
	}
	return c, nil
}

func rules(in map[string]fileRule, section string, retryAllowed bool) (map[string]Rule, error) {
	out := make(map[string]Rule, len(in))
	kind := tagRule
	if retryAllowed {
		kind = toolRule
	}
	for name, fr := range in {
		where := section + "." + name
		var r Rule
		if fr.Expose.Kind != 0 {
			e, err := exposure(&fr.Expose, where+".expose", kind)
			if err != nil {
				return nil, err
			}
			r.Expose = e
		}
		if fr.Risk != "" {
			c, err := risk.Parse(fr.Risk)
			if err != nil {
				return nil, fmt.Errorf("config: %s.risk: %v", where, err)
			}
			r.Risk = &c
		}
		if fr.Retry != "" {
			if !retryAllowed {
				return nil, fmt.Errorf("config: %s.retry: retries are set per tool, never for a whole tag: opting in must name the operation", where)
			}
			m, err := retry.ParseMode(fr.Retry)
			if err != nil {
				return nil, fmt.Errorf("config: %s.retry: %v", where, err)
			}
			r.Retry = &m
		}
		if fr.Guard != "" {
			if !retryAllowed {
				return nil, fmt.Errorf("config: %s.guard: the guard is set per tool, never for a whole tag", where)
			}
			g, err := ParseGuard(fr.Guard)
			if err != nil {
				return nil, fmt.Errorf("config: %s.guard: %v", where, err)
			}
			r.Guard = g
		}
		if fr.Deadline != "" {
			d, err := deadline(fr.Deadline, where+".deadline")
			if err != nil {
				return nil, err
			}
			r.Deadline = d
		}
		if fr.ConfirmTimeout != "" {
			d, err := deadline(fr.ConfirmTimeout, where+".confirm_timeout")
			if err != nil {
				return nil, err
			}
			r.ConfirmTimeout = d
		}
		out[name] = r
	}
	return out, nil
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
// confirm.
func exposure(n *yaml.Node, where string, kind ruleKind) (*Exposure, error) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("config: %s %q: give true or false", where, n.Value)
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
		return nil, fmt.Errorf("config: %s: a tool rule takes true (show this tool, whatever its class), "+
			"confirm (show it, and have a person accept each call before it is sent) or false (hide it)", where)
	case n.Kind == yaml.MappingNode:
		return confirmedExposure(n, where, kind)
	}
	c, as, err := classList(n, where, kind)
	if err != nil {
		return nil, err
	}
	return &Exposure{Classes: c, As: as}, nil
}

// confirmedExposure reads the mapping form of an expose setting: the
// classes to show, and those to show with a person's confirmation.
func confirmedExposure(n *yaml.Node, where string, kind ruleKind) (*Exposure, error) {
	e := &Exposure{}
	var parts []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		if key != "show" && key != "confirm" {
			return nil, fmt.Errorf("config: %s: %q is not a field of expose: use show (the classes shown) and confirm "+
				"(the classes shown with a person's confirmation of each call), such as {show: [read], confirm: [write]}", where, key)
		}
		c, as, err := classList(value, where+"."+key, kind)
		if err != nil {
			return nil, err
		}
		if key == "show" {
			e.Classes |= c
		} else {
			e.Confirm |= c
		}
		parts = append(parts, key+": "+as)
	}
	if both := e.Classes & e.Confirm; both != 0 {
		return nil, fmt.Errorf("config: %s: %s is both in show and in confirm; list it in one of them", where, both)
	}
	e.Classes |= e.Confirm
	e.As = "{" + strings.Join(parts, ", ") + "}"
	return e, nil
}

// classList reads a class, classes joined with "+", "none", or a list of
// classes, and how the configuration wrote it.
func classList(n *yaml.Node, where string, kind ruleKind) (Classes, string, error) {
	var names []string
	var as string
	switch n.Kind {
	case yaml.ScalarNode:
		as = n.Value
		if v := strings.TrimSpace(strings.ToLower(n.Value)); v != "none" {
			names = strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' || r == ' ' })
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return 0, "", fmt.Errorf("config: %s: list the classes by name (read, write, destructive, privileged)", where)
			}
			names = append(names, item.Value)
		}
		as = "[" + strings.Join(names, ", ") + "]"
	default:
		return 0, "", fmt.Errorf("config: %s: give true, false, none, a class such as read+write, a list of classes, "+
			"or the classes to show and to confirm, such as {show: [read], confirm: [write]}", where)
	}
	var c Classes
	for _, name := range names {
		if strings.EqualFold(strings.TrimSpace(name), "confirm") {
			return 0, "", fmt.Errorf("config: %s: confirm alone is for a tool; a tag or the default names the classes a person confirms, "+
				"such as {show: [read], confirm: [write]}", where)
		}
		k, err := risk.Parse(name)
		if err != nil {
			return 0, "", fmt.Errorf("config: %s: %v (or none)", where, err)
		}
		if kind == defaultRule && k > risk.Write {
			return 0, "", fmt.Errorf("config: %s %q: the default exposes none, read or read+write; "+
				"expose %s tools by tag (expose: [read, write, %s]) or one by one (tools.NAME.expose: confirm or true)", where, as, k, k)
		}
		c = c.With(k)
	}
	return c, as, nil
}

func deadline(s, where string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d > time.Hour {
		return 0, fmt.Errorf("config: %s %q: give a duration such as 30s, up to 1h", where, s)
	}
	return d, nil
}
