// Package risk classifies API operations for toolgate: read, write,
// destructive or privileged, from the method and from the evidence the
// document gives, each classification with its reasons, and a flag where
// the evidence disagrees, so that a person looks there first.
//
// The evidence is words, read where they stand: the verb of an
// operation's id, summary and description (merge, revoke, capture, exec),
// the nouns of its path, whole or inside compound words (rolebinding,
// webhook, kubeconfig, secrets), phrases of its description ("cannot be
// undone", "must have admin access"), the top level of its request body
// (an action chosen by an enum, a force flag), its OAuth scopes and its
// x-risk extension. None of it names an API: every document is read the
// same way.
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
	return 0, fmt.Errorf("unknown class %q: use read, write, destructive or privileged", s)
}

// Assessment is a classification and why.
type Assessment struct {
	Class   Class    `json:"class"`
	Reasons []string `json:"reasons"`
	// Review says where the evidence disagrees: a person should look at
	// these operations first. Empty when it agrees.
	Review []string `json:"review,omitempty"`
}

// raise moves the assessment up to c, noting why; it never lowers it.
func (a *Assessment) raise(c Class, why string) {
	for _, r := range a.Reasons {
		if r == why {
			return
		}
	}
	a.Reasons = append(a.Reasons, why)
	if c > a.Class {
		a.Class = c
	}
}

// note adds a reason that does not change the class.
func (a *Assessment) note(why string) { a.Reasons = append(a.Reasons, why) }

// flag asks for a person's review, saying why.
func (a *Assessment) flag(why string) { a.Review = append(a.Review, why) }

// Assess classifies op. doc, when not nil, is op's document: it lets the
// engine read the request body's schema through its references.
func Assess(op *spec.Operation, doc *spec.Document) Assessment {
	var a Assessment
	v := newView(op)
	switch {
	case v.safe:
		a.note(op.Method + " reads")
	case op.Method == "DELETE":
		a.raise(Destructive, "DELETE removes")
	default:
		a.raise(Write, op.Method+" changes state")
	}
	changing := !v.safe
	if a.reachIn(v, changing) && v.safe {
		a.Reasons[0] = op.Method + ", but it opens a connection rather than read"
		changing = true
	}
	if !changing {
		changing = a.changingRead(v)
	}
	if changing {
		a.verbs(v)
		a.money(v)
		a.changedNouns(v)
		a.settings(v)
	} else {
		a.answer(doc, v)
	}
	a.secrets(v, changing)
	a.description(v, changing)
	a.scopes(v, changing)
	if !v.safe && a.Class < Privileged {
		a.body(doc, v) // what a body says can raise no further than that
	}
	a.extensions(op)
	if a.Class == Write && !v.safe {
		if w, _, _ := verbIn(splitWords(firstSentence(v.description())), nameSlot, destroys, irreversible, movesMoney, approves); w != "" {
			a.flag(fmt.Sprintf("its description speaks of %q, its name does not: is it more than a write?", w))
		}
	}
	return a
}

// changingRead decides whether a GET (or HEAD, OPTIONS, TRACE) changes
// state after all: HTTP says it is safe, but its name may say it revokes,
// uninstalls or requests. A GET that changes state is not retried once
// sent, and is classed by what it changes.
func (a *Assessment) changingRead(v *view) bool {
	if r, _, _ := verbIn(v.lead, verbSlot, reads); r != "" {
		return false // its own verb says it reads: "Check if a pull request has been merged"
	}
	var final []string
	if n := len(v.last); n > 0 {
		final = v.last[n-1:]
	}
	state := []kind{changes, destroys, irreversible, movesMoney, approves}
	word, _, k := verbIn(v.lead, verbSlot, state...)
	if word == "" {
		word, _, k = verbIn(final, getSlot, state...)
	}
	if word == "" {
		return false
	}
	if r, _, _ := verbIn(final, verbSlot, reads); r != "" {
		a.flag(fmt.Sprintf("its name says both that it reads (%q) and that it changes state (%q): classed as a read", r, word))
		return false
	}
	a.Reasons[0] = v.op.Method + ", but its name says it does more than read"
	c, claim := Write, claims[changes]
	switch k {
	case destroys, irreversible, movesMoney:
		c, claim = Destructive, claims[k]
	case approves:
		c, claim = Privileged, claims[k]
	}
	a.raise(c, fmt.Sprintf("%s (%q in its name)", claim, word))
	return true
}

// reachIn finds operations that run commands in, attach to or proxy into
// a running system, whatever their method: a GET that opens a shell is
// no read. Adding a container to a running one is the same act.
func (a *Assessment) reachIn(v *view, changing bool) bool {
	places := append([][]string{v.id, v.summary}, v.segments...)
	for _, words := range places {
		w, verb, _ := verbIn(words, actionSlot, reachesIn)
		if w == "" || verb == "attach" && !a.attachesToProcess(v) {
			continue
		}
		a.raise(Privileged, fmt.Sprintf("%s (%q)", claims[reachesIn], w))
		return true
	}
	for _, j := range v.joined {
		// Compounds: "portforward", "ephemeralcontainers".
		if strings.Contains(j, "portforward") || changing && strings.Contains(j, "ephemeralcontainer") {
			a.raise(Privileged, fmt.Sprintf("%s (%q)", claims[reachesIn], v.spelt(j)))
			return true
		}
	}
	return false
}

// attachesToProcess says whether an operation attaches to something that
// runs (a container, a process, a console), not a thing to a thing.
func (a *Assessment) attachesToProcess(v *view) bool {
	for _, words := range [][]string{v.named, v.pathWords} {
		for _, w := range words {
			if processNouns[w] {
				return true
			}
		}
	}
	return false
}

// verbs applies the verbs of a changing operation: destroying, undoing,
// merging, transferring, approving.
func (a *Assessment) verbs(v *view) {
	kinds := []kind{destroys, irreversible, approves}
	for _, p := range []struct {
		words []string
		at    where
	}{{v.lead, verbSlot}, {v.last, actionSlot}, {v.id, nameSlot}, {v.summary, nameSlot}} {
		w, _, k := verbIn(p.words, p.at, kinds...)
		if w == "" {
			continue
		}
		c := Destructive
		if k == approves {
			c = Privileged
		}
		a.raise(c, fmt.Sprintf("%s (%q in its name)", claims[k], w))
		return
	}
}

// moneyContext returns the noun of money in an operation's path, id or
// summary, if it is about payments.
func (a *Assessment) moneyContext(v *view) string {
	for _, words := range append([][]string{v.id, v.summary}, v.segments...) {
		for _, w := range words {
			if moneyNouns[w] {
				return w
			}
		}
	}
	return ""
}

// baseOf returns the verb w is a form of, or w.
func baseOf(w string) string {
	if v, _ := lemma(w); v != "" {
		return v
	}
	return w
}

// money finds operations that move money: by their verb (pay, capture,
// refund), by creating a payment, charge or payout, or by confirming or
// processing one.
func (a *Assessment) money(v *view) {
	if w, _, _ := verbIn(v.lead, verbSlot, movesMoney); w != "" {
		a.raise(Destructive, fmt.Sprintf("%s (%q in its name)", claims[movesMoney], w))
		return
	}
	if w, _, _ := verbIn(v.last, actionSlot, movesMoney); w != "" {
		a.raise(Destructive, fmt.Sprintf("%s (%q in its name)", claims[movesMoney], w))
		return
	}
	if n := len(v.last); n > 0 && v.create && moneyNouns[v.last[n-1]] && strings.HasSuffix(v.last[n-1], "s") {
		a.raise(Destructive, fmt.Sprintf("%s: it creates %s, and creating one moves money", claims[movesMoney], v.last[n-1]))
		return
	}
	for _, words := range [][]string{v.lead, v.last} {
		for _, w := range words {
			if noun := a.moneyContext(v); noun != "" && moneyActions[baseOf(w)] {
				a.raise(Destructive, fmt.Sprintf("%s: %q, said of %q", claims[movesMoney], w, noun))
				return
			}
		}
	}
}

// changedNouns applies the nouns of what a changing operation changes:
// access, the account itself, billing, where events go, certificates.
func (a *Assessment) changedNouns(v *view) {
	path, named := v.pathWords, v.named
	for _, r := range []struct {
		nouns nouns
		class Class
		claim string
	}{
		{accessNouns, Privileged, "it changes who may do what"},
		{adminNouns, Privileged, "it is an administrator's act"},
		{webhookNouns, Privileged, "it changes where events and data are sent"},
		{certNouns, Privileged, "it changes certificates that prove identity"},
		{billingNouns, Privileged, "it changes billing or spending"},
	} {
		if w := r.nouns.in(path); w != "" {
			a.raise(r.class, fmt.Sprintf("%s (%q in the path)", r.claim, v.spelt(w)))
		} else if w := r.nouns.in(named); w != "" {
			a.raise(r.class, fmt.Sprintf("%s (%q in its name)", r.claim, w))
		}
	}
	if n := len(v.segments); n > 0 {
		if w := accountNouns.in(v.segments[n-1]); w != "" {
			a.raise(Privileged, fmt.Sprintf("it changes an account or organization itself (%q is what it changes)", w))
		}
	}
}

// secrets finds credentials: reading them is privileged too. Keys that
// are public by nature (a user's SSH or GPG keys, a JWKS) are no secret to
// read, but adding or removing them changes who may get in.
func (a *Assessment) secrets(v *view, changing bool) {
	path, named := v.pathWords, v.named
	if !changing && a.readsPublicKey(v) {
		a.note(fmt.Sprintf("what it reads is a public key, no secret (%q)", strings.Join(v.last, "-")))
		return
	}
	if !changing {
		named = v.id
	}
	find := func(words []string) string {
		for _, w := range words {
			if w != "key" && w != "keys" && secretNouns.in([]string{w}) != "" {
				return w
			}
		}
		for _, w := range words {
			if w == "key" || w == "keys" || strings.HasSuffix(w, "key") || strings.HasSuffix(w, "keys") {
				if secretNouns.in([]string{w}) != "" {
					return w
				}
			}
		}
		return ""
	}
	w, where := v.spelt(find(path)), "in the path"
	if w == "" {
		w, where = find(named), "in its name"
	}
	if w == "" {
		return
	}
	if (w == "key" || w == "keys") && a.publicKeys(v) != "" {
		if changing {
			a.raise(Privileged, fmt.Sprintf("it adds or removes keys that let someone in (%q %s)", w, where))
		} else {
			a.note(fmt.Sprintf("the keys here are public keys, not secrets (%q)", a.publicKeys(v)))
		}
		return
	}
	if changing {
		a.raise(Privileged, fmt.Sprintf("it creates, changes or uses credentials (%q %s)", w, where))
	} else {
		a.raise(Privileged, fmt.Sprintf("it reads credentials, which is privileged too (%q %s)", w, where))
	}
}

// readsPublicKey says whether what an operation reads, its path's final
// segment, is a public key ("/secrets/public-key").
func (a *Assessment) readsPublicKey(v *view) bool {
	key, public := false, false
	for _, w := range v.last {
		key = key || w == "key" || w == "keys"
		public = public || publicKeyWords[w]
	}
	return key && public
}

// publicKeys returns the word that says an operation's keys are public.
func (a *Assessment) publicKeys(v *view) string {
	for _, words := range append([][]string{v.id, v.summary}, v.segments...) {
		for _, w := range words {
			if publicKeyWords[w] {
				return w
			}
		}
	}
	return ""
}

var (
	// cannotUndo are phrases of descriptions that say a change is final.
	cannotUndo = regexp.MustCompile(`\b(?:cannot|can't|can not) be (?:undone|reversed|recovered)|\birreversibl[ey]\b|\bnot reversible\b|\bpermanently (?:delete|remove|destroy|erase)s?\b|\bis permanent\b`)
	// adminOnly are phrases that say only administrators or owners may
	// call an operation.
	adminOnly = regexp.MustCompile(`\bmust (?:be|have) (?:an? |the )?(?:[a-z]+ )?(?:owner|admin|administrator)s?\b|\b(?:admin|administrator|owner)s? (?:or [a-z]+(?: [a-z]+)? )?(?:access|permissions?|rights|privileges)\b|\badmin:[a-z_]+\b|\bonly (?:[a-z]+ )?(?:owners|admins|administrators) (?:can|may)\b`)
)

// The words the phrases above are looked for around, and words one of
// which must be near for an admin phrase to match.
var (
	undoKeys   = []string{"undone", "reversed", "recovered", "reversib", "permanent"}
	adminKeys  = []string{"admin", "owner"}
	adminHints = []string{"must", "access", "permission", "rights", "privilege", "admin:", "only"}
)

// description applies phrases of the description.
func (a *Assessment) description(v *view, changing bool) {
	if !changing {
		return // reading is no less a read for being an administrator's
	}
	if m := phrase(v.description(), cannotUndo, undoKeys, nil); m != "" {
		a.raise(Destructive, fmt.Sprintf("its description says it cannot be undone (%q)", m))
	}
	if m := phrase(v.description(), adminOnly, adminKeys, adminHints); m != "" {
		a.raise(Privileged, fmt.Sprintf("its description says only administrators or owners may do it (%q)", m))
	}
}

// privilegedScopes and writeScopes are words in OAuth scopes.
var (
	privilegedScopes = regexp.MustCompile(`(?i)(admin|owner|superuser|root|manage|sudo)`)
	writeScopes      = regexp.MustCompile(`(?i)(write|delete|modify|create|update|execute|share)`)
)

// scopes applies the OAuth scopes an operation needs.
func (a *Assessment) scopes(v *view, changing bool) {
	for _, req := range v.op.Security {
		for scheme, scopes := range req {
			for _, s := range scopes {
				switch {
				case privilegedScopes.MatchString(s) && changing:
					a.raise(Privileged, fmt.Sprintf("it needs the %s scope %q", scheme, s))
				case privilegedScopes.MatchString(s):
					a.note(fmt.Sprintf("it needs the %s scope %q, an administrator's; to read, that alone does not make it privileged", scheme, s))
				case writeScopes.MatchString(s) && a.Class < Write:
					a.raise(Write, fmt.Sprintf("it needs the %s scope %q, which writes", scheme, s))
					a.flag(fmt.Sprintf("the method says it reads, its %s scope %q says it writes", scheme, s))
				}
			}
		}
	}
}

// extensions applies x-risk, which may raise the class but never lower
// it (a document is untrusted: only the operator's configuration may lower
// a class), and x-openai-isConsequential.
func (a *Assessment) extensions(op *spec.Operation) {
	if raw, ok := op.Extensions["x-risk"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if c, err := Parse(s); err == nil {
				if c > a.Class {
					a.raise(c, "the document says x-risk: "+c.String())
				} else if c < a.Class {
					a.note("the document says x-risk: " + c.String() + ", but a document cannot lower the class")
					a.flag(fmt.Sprintf("the document calls it %s, the engine %s", c, a.Class))
				}
			}
		}
	}
	if raw, ok := op.Extensions["x-openai-isConsequential"]; ok {
		var b bool
		if json.Unmarshal(raw, &b) == nil && b && a.Class < Write {
			a.raise(Write, "the document says x-openai-isConsequential: true")
		}
	}
}
