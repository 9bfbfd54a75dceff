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
	// Deadline bounds each tool call by default: every attempt and every
	// wait. Default 30 s.
	Deadline time.Duration
	Tags     map[string]Rule
	Tools    map[string]Rule
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
	// Expose, when set, shows or hides the tools; enabling a destructive
	// or privileged tool takes an explicit true here.
	Expose *bool
	// Risk overrides the class the engine decided.
	Risk *risk.Class
	// Retry sets how a tool may be retried once sent; only a tool's own
	// rule may opt in.
	Retry *retry.Mode
	// Deadline bounds the tool's calls.
	Deadline time.Duration
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
// authentication, nothing destructive or privileged exposed.
func Default() *Config {
	return &Config{Deadline: 30 * time.Second, Upstream: Upstream{Auth: Auth{Type: "none"}}}
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
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	p := &parser{cfg: Default()}
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
	cfg      *Config
	authLine int // where upstream.auth is, for the checks across its fields
}

// field is a setting a mapping may hold, and how to read its value.
type field struct {
	name string
	read func(v *yaml.Node, path string) error
}

func (p *parser) root(n *yaml.Node) error {
	return p.mapping(n, "", "upstream, defaults, tags and tools", []field{
		{"upstream", p.upstream},
		{"defaults", func(v *yaml.Node, path string) error {
			return p.mapping(v, path, "{deadline: 30s}", []field{
				{"deadline", func(v *yaml.Node, path string) error { return duration(v, path, &p.cfg.Deadline) }},
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
			const want = "give an http or https URL, such as https://api.example.com"
			if err := str(v, path, want, &u.URL); err != nil || u.URL == "" {
				return err
			}
			if parsed, err := url.Parse(u.URL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
				return wrong(v, path, want)
			}
			return nil
		}},
		{"auth", func(v *yaml.Node, path string) error {
			p.authLine = v.Line
			return p.mapping(v, path, "{type: bearer, env: API_TOKEN}", []field{
				{"type", func(v *yaml.Node, path string) error {
					const want = "give none, bearer, header or basic"
					if err := str(v, path, want, &u.Auth.Type); err != nil {
						return err
					}
					switch u.Auth.Type {
					case "", "none", "bearer", "header", "basic":
						return nil
					}
					return wrong(v, path, want)
				}},
				{"env", func(v *yaml.Node, path string) error {
					return str(v, path, "give the name of the environment variable that holds the secret, such as API_TOKEN", &u.Auth.Env)
				}},
				{"header", func(v *yaml.Node, path string) error {
					return str(v, path, "give the name of the header that carries the secret, such as X-API-Key", &u.Auth.Header)
				}},
			})
		}},
	})
}

// checkAuth checks upstream.auth's fields together.
func (p *parser) checkAuth() error {
	a := &p.cfg.Upstream.Auth
	if a.Type == "" {
		a.Type = "none"
	}
	switch {
	case (a.Type == "bearer" || a.Type == "basic") && a.Env == "":
		return &Error{Line: p.authLine, Field: "upstream.auth.env",
			Msg: "upstream.auth: type " + a.Type + " needs env, the name of the environment variable that holds the secret"}
	case a.Type == "header" && (a.Env == "" || a.Header == ""):
		return &Error{Line: p.authLine, Field: "upstream.auth",
			Msg: "upstream.auth: type header needs env, the environment variable that holds the secret, and header, the header that carries it"}
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
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		where := path + "." + k.Value
		if first, dup := seen[k.Value]; dup {
			return &Error{Line: k.Line, Field: where, Msg: fmt.Sprintf("%s is given twice (first on line %d)", where, first)}
		}
		seen[k.Value] = k.Line
		r, err := p.rule(v, where, isTool)
		if err != nil {
			return err
		}
		(*dst)[k.Value] = r
	}
	return nil
}

func (p *parser) rule(n *yaml.Node, path string, isTool bool) (Rule, error) {
	var r Rule
	err := p.mapping(n, path, "{expose: true}", []field{
		{"expose", func(v *yaml.Node, path string) error { return boolean(v, path, &r.Expose) }},
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
	})
	return r, err
}

// mapping reads n, a mapping whose keys must be among fields; example
// shows what one looks like. An empty value is an empty mapping.
func (p *parser) mapping(n *yaml.Node, path, example string, fields []field) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
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
			if err := p.merge(v, path, example, fields); err != nil {
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
			return &Error{Line: k.Line, Field: where, Msg: unknownField(path, k.Value, names)}
		}
		if err := fields[i].read(v, where); err != nil {
			return err
		}
	}
	return nil
}

// merge reads the mappings a merge key names as if they were written in
// place.
func (p *parser) merge(v *yaml.Node, path, example string, fields []field) error {
	v = deref(v)
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			if err := p.mapping(m, path, example, fields); err != nil {
				return err
			}
		}
		return nil
	}
	return p.mapping(v, path, example, fields)
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

func boolean(n *yaml.Node, path string, dst **bool) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		return wrong(n, path, "give true or false")
	}
	*dst = &b
	return nil
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
