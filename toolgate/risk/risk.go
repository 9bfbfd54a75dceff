// Package risk classifies API operations for toolgate: read, write,
// destructive or privileged, from the method and from the evidence the
// document gives, each classification with its reasons.
package risk

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Class is how much harm calling an operation can do.
type Class int

// The classes, in increasing order of risk.
const (
	Read Class = iota
	Write
	Destructive
	Privileged
)

var names = [...]string{"read", "write", "destructive", "privileged"}

// String returns the class's name.
func (c Class) String() string {
	if c >= 0 && int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// MarshalText writes the class's name.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Parse returns the class named s.
func Parse(s string) (Class, error) {
	for i, n := range names {
		if n == strings.ToLower(strings.TrimSpace(s)) {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("risk: unknown class %q: use read, write, destructive or privileged", s)
}

// Assessment is a classification and why.
type Assessment struct {
	Class   Class    `json:"class"`
	Reasons []string `json:"reasons"`
}

// raise moves the assessment up to c, noting why; it never lowers it.
func (a *Assessment) raise(c Class, why string) {
	a.Reasons = append(a.Reasons, why)
	if c > a.Class {
		a.Class = c
	}
}

// destructiveVerbs mark operations that destroy or undo: whole words, with
// their common endings, in text whose camelCase was split into words.
var destructiveVerbs = regexp.MustCompile(`(?i)(^|[^a-z])(delete|deletion|remove|removal|purge|destroy|cancel|refund|revoke|terminate|reset|wipe|erase|drop|truncate|void|kill|uninstall|disable|deactivate|unpublish)(s|d|ed|es|ing|led|ling|lation|ion|ions)?([^a-z]|$)`)

// camel splits camelCase words: "cancelSubscription" → "cancel Subscription".
var camel = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// credentialResources are paths whose data is a secret: any operation on
// them is privileged, reading included.
var credentialResources = regexp.MustCompile(`(?i)(^|[/_.-])(keys?|tokens?|secrets?|credentials?|passwords?|ssh-keys?|gpg-keys?|oauth|private-key|api-keys?|signing)([/_.-]|$)`)

// accessResources are paths that govern who may do what, and
// accountResources paths that hold accounts and money: changing either is
// privileged.
var (
	accessResources  = regexp.MustCompile(`(?i)(^|[/_.-])(admin|administrators?|members?|memberships?|roles?|permissions?|collaborators?|invitations?|teams?|owners?|policies|policy|access|sso|saml|scim)([/_.-]|$)`)
	accountResources = regexp.MustCompile(`(?i)(^|[/_.-])(users?|accounts?|billing|payments?|settings)([/_.-]|$)`)
)

// privilegedScopes and writeScopes are words in OAuth scopes.
var (
	privilegedScopes = regexp.MustCompile(`(?i)(admin|owner|superuser|root|manage|sudo)`)
	writeScopes      = regexp.MustCompile(`(?i)(write|delete|modify|create|update)`)
)

// Assess classifies op.
func Assess(op *spec.Operation) Assessment {
	var a Assessment
	switch op.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		a.Reasons = append(a.Reasons, op.Method+" reads")
	case "DELETE":
		a.raise(Destructive, "DELETE removes")
	default:
		a.raise(Write, op.Method+" changes state")
	}
	mutating := a.Class > Read

	text := camel.ReplaceAllString(op.ID+" "+op.Summary+" "+op.Path, "$1 $2")
	if m := destructiveVerbs.FindStringSubmatch(text); m != nil {
		word := strings.ToLower(m[2])
		if mutating {
			a.raise(Destructive, fmt.Sprintf("%q in the operation", word))
		} else {
			a.Reasons = append(a.Reasons, fmt.Sprintf("%q in the operation, but a %s cannot destroy", word, op.Method))
		}
	}
	if m := credentialResources.FindStringSubmatch(op.Path); m != nil {
		a.raise(Privileged, fmt.Sprintf("credentials in the path (%q)", strings.ToLower(m[2])))
	}
	if m := accessResources.FindStringSubmatch(op.Path); m != nil && mutating {
		a.raise(Privileged, fmt.Sprintf("changes who may do what (%q in the path)", strings.ToLower(m[2])))
	} else if m := accountResources.FindStringSubmatch(op.Path); m != nil && mutating {
		a.raise(Privileged, fmt.Sprintf("changes accounts or billing (%q in the path)", strings.ToLower(m[2])))
	}
	for _, req := range op.Security {
		for scheme, scopes := range req {
			for _, s := range scopes {
				switch {
				case privilegedScopes.MatchString(s):
					a.raise(Privileged, fmt.Sprintf("needs the %s scope %q", scheme, s))
				case writeScopes.MatchString(s) && a.Class < Write:
					a.raise(Write, fmt.Sprintf("needs the %s scope %q", scheme, s))
				}
			}
		}
	}
	// The document may raise the class; it never lowers it: a document is
	// untrusted, and only the operator's config may lower a class.
	if raw, ok := op.Extensions["x-risk"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if c, err := Parse(s); err == nil {
				if c > a.Class {
					a.raise(c, "x-risk: "+c.String())
				} else {
					a.Reasons = append(a.Reasons, "x-risk: "+c.String()+" (the document cannot lower the class)")
				}
			}
		}
	}
	if raw, ok := op.Extensions["x-openai-isConsequential"]; ok {
		var b bool
		if json.Unmarshal(raw, &b) == nil && b && a.Class < Write {
			a.raise(Write, "x-openai-isConsequential: true")
		}
	}
	return a
}
