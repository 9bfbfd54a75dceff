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
// the endings below, in text whose camelCase is split into words.
var destructiveVerbs = words("delete deletion remove removal purge destroy cancel refund revoke terminate reset wipe erase drop truncate void kill uninstall disable deactivate unpublish")

var verbEndings = []string{"s", "d", "ed", "es", "ing", "led", "ling", "lation", "ion", "ions"}

// credentialResources are paths whose data is a secret: any operation on
// them is privileged, reading included.
var credentialResources = words("key keys token tokens secret secrets credential credentials password passwords ssh-key ssh-keys gpg-key gpg-keys oauth private-key api-key api-keys signing")

// accessResources are paths that govern who may do what, and
// accountResources paths that hold accounts and money: changing either is
// privileged.
var (
	accessResources = words("admin administrator administrators member members membership memberships role roles permission permissions " +
		"collaborator collaborators invitation invitations team teams owner owners policies policy access sso saml scim")
	accountResources = words("user users account accounts billing payment payments settings")
)

func words(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// destructiveVerb returns the first destructive verb in text, without its
// ending, or "". Words are runs of letters; a lower-case letter or digit
// followed by an upper-case one also ends a word ("cancelSubscription").
func destructiveVerb(text string) string {
	start := -1
	for i := 0; i <= len(text); i++ {
		letter := i < len(text) && isLetter(text[i])
		boundary := !letter || (i > 0 && isUpper(text[i]) && (isLower(text[i-1]) || isDigit(text[i-1])))
		if boundary && start >= 0 {
			if v := verb(strings.ToLower(text[start:i])); v != "" {
				return v
			}
			start = -1
		}
		if letter && start < 0 {
			start = i
		}
	}
	return ""
}

// verb returns the destructive verb that the word w is, with or without
// an ending, or "".
func verb(w string) string {
	if destructiveVerbs[w] {
		return w
	}
	for _, e := range verbEndings {
		if base, ok := strings.CutSuffix(w, e); ok && destructiveVerbs[base] {
			return base
		}
	}
	return ""
}

// pathWord returns the first segment of path, or part of a segment
// between _, . and -, that is in set, or "".
func pathWord(path string, set map[string]bool) string {
	for seg := range strings.SplitSeq(strings.ToLower(path), "/") {
		if set[seg] {
			return seg
		}
		for part := range strings.FieldsFuncSeq(seg, func(r rune) bool { return r == '_' || r == '.' || r == '-' }) {
			if set[part] {
				return part
			}
		}
	}
	return ""
}

func isLetter(c byte) bool { return isLower(c) || isUpper(c) }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

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

	if word := destructiveVerb(op.ID + " " + op.Summary + " " + op.Path); word != "" {
		if mutating {
			a.raise(Destructive, fmt.Sprintf("%q in the operation", word))
		} else {
			a.Reasons = append(a.Reasons, fmt.Sprintf("%q in the operation, but a %s cannot destroy", word, op.Method))
		}
	}
	if w := pathWord(op.Path, credentialResources); w != "" {
		a.raise(Privileged, fmt.Sprintf("credentials in the path (%q)", w))
	}
	if !mutating {
		// Reading who may do what is not privileged; changing it is.
	} else if w := pathWord(op.Path, accessResources); w != "" {
		a.raise(Privileged, fmt.Sprintf("changes who may do what (%q in the path)", w))
	} else if w := pathWord(op.Path, accountResources); w != "" {
		a.raise(Privileged, fmt.Sprintf("changes accounts or billing (%q in the path)", w))
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
