// Package config reads toolgate's YAML configuration: the upstream and its
// authentication, defaults, and per-tag and per-tool settings.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
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
	Expose   *bool  `yaml:"expose"`
	Risk     string `yaml:"risk"`
	Retry    string `yaml:"retry"`
	Deadline string `yaml:"deadline"`
	Guard    string `yaml:"guard"`
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
		Deadline string `yaml:"deadline"`
	} `yaml:"defaults"`
	Tags  map[string]fileRule `yaml:"tags"`
	Tools map[string]fileRule `yaml:"tools"`
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
	for name, fr := range in {
		where := section + "." + name
		r := Rule{Expose: fr.Expose}
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
		out[name] = r
	}
	return out, nil
}

func deadline(s, where string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d > time.Hour {
		return 0, fmt.Errorf("config: %s %q: give a duration such as 30s, up to 1h", where, s)
	}
	return d, nil
}
