package risk

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Limits of the walk through an answer's schema: credentials sit a few
// properties down ("user.password", "database.connection.password"), in
// lists and combinations; deeper lie the objects an answer embeds (a
// payment's customer's card), which are read for themselves elsewhere.
const (
	maxAnswerDepth      = 3
	maxAnswerSchemas    = 512
	maxAnswerCombinings = 8
)

// credentialIn returns where the schema of op's answer (its first 2xx
// JSON response) holds a credential, as a dotted path of property names
// ("user.password"), or "". A property the document marks writeOnly is
// never in an answer; one that holds a flag or a number (password_set,
// is_secret, prompt_tokens) holds no secret.
func credentialIn(doc *spec.Document, op *spec.Operation) string {
	if doc == nil || len(op.Output) == 0 {
		return ""
	}
	seen := 0
	var walk func(raw json.RawMessage, at string, depth, combined int) string
	walk = func(raw json.RawMessage, at string, depth, combined int) string {
		if seen++; seen > maxAnswerSchemas || depth >= maxAnswerDepth || combined > maxAnswerCombinings {
			return ""
		}
		raw, err := doc.Deref(raw, op.Where)
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			return ""
		}
		var s struct {
			WriteOnly            bool                       `json:"writeOnly"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Items                json.RawMessage            `json:"items"`
			AdditionalProperties json.RawMessage            `json:"additionalProperties"`
			AllOf                []json.RawMessage          `json:"allOf"`
			OneOf                []json.RawMessage          `json:"oneOf"`
			AnyOf                []json.RawMessage          `json:"anyOf"`
		}
		if json.Unmarshal(raw, &s) != nil || s.WriteOnly {
			return ""
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if credentialName(name, depth) && holdsSecret(doc, op, s.Properties[name]) {
				return joinPath(at, name)
			}
		}
		for _, name := range names {
			if p := walk(s.Properties[name], joinPath(at, name), depth+1, combined); p != "" {
				return p
			}
		}
		// A list's items and a combination's parts are the same level.
		subs := append(append(append([]json.RawMessage{}, s.AllOf...), s.OneOf...), s.AnyOf...)
		if len(s.Items) > 0 {
			subs = append(subs, s.Items)
		}
		if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
			subs = append(subs, s.AdditionalProperties)
		}
		for _, sub := range subs {
			if p := walk(sub, at, depth, combined+1); p != "" {
				return p
			}
		}
		return ""
	}
	return walk(op.Output, "", 0, 0)
}

func joinPath(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// holdsSecret says whether the property schema raw, named as a credential
// is, holds one: a credential is a string; a flag, a number, a count, or a
// list or an object (signing_keys: [...]), whose own properties the walk
// reads, is none; nor is a secret that the document says is handed to the
// client side (a payment's client secret, used with a publishable key).
func holdsSecret(doc *spec.Document, op *spec.Operation, raw json.RawMessage) bool {
	raw, err := doc.Deref(raw, op.Where)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var p struct {
		Type        json.RawMessage `json:"type"`
		WriteOnly   bool            `json:"writeOnly"`
		Description string          `json:"description"`
	}
	if json.Unmarshal(raw, &p) != nil || p.WriteOnly || clientSide.MatchString(p.Description) {
		return false
	}
	for _, t := range []string{`"boolean"`, `"integer"`, `"number"`, `"array"`, `"object"`} {
		if bytes.Contains(p.Type, []byte(t)) && !bytes.Contains(p.Type, []byte(`"string"`)) {
			return false
		}
	}
	return true
}

// credentialName says whether a property of this name, depth properties
// below the answer, holds a credential: its last word is a password, a
// secret or a token (not a page's token, not a count of tokens), a key that
// is an API's, a private or a secret one, a connection string or a DSN. A
// bare "token" is a credential only near the top of the answer: deeper, it
// is as often a piece of text (a model's logprobs).
func credentialName(name string, depth int) bool {
	w := splitWords(name)
	n := len(w)
	if n == 0 {
		return false
	}
	last, prev := w[n-1], ""
	if n > 1 {
		prev = w[n-2]
	}
	switch {
	case answerSecretWords[last]:
		return true
	case last == "token" && n == 1:
		return depth < 2
	case last == "token" || strings.HasSuffix(last, "token") && answerTokenWords[strings.TrimSuffix(last, "token")]:
		return !pageWords[prev] && !handedOut[prev] && !fetchWords[prev]
	case last == "key" || last == "keys":
		return answerKeyWords[prev]
	case strings.HasSuffix(last, "key") && answerKeyWords[strings.TrimSuffix(last, "key")]:
		return true // apikey, privatekey
	case last == "string" && prev == "connection", last == "connectionstring", last == "dsn":
		return true
	}
	return false
}

var (
	// clientSide are phrases that say a secret is meant for the client
	// side, where the customer holds it.
	clientSide = regexp.MustCompile(`(?i)\b(?:client[- ]side|publishable key|front[- ]?end)\b`)
	// answerSecretWords are the last words of properties that hold a
	// secret whatever comes before them.
	answerSecretWords = set("password passwd passphrase secret clientsecret credential credentials")
	// answerTokenWords are what a joined word ending in "token" names:
	// accesstoken, authtoken.
	answerTokenWords = set("access auth refresh bearer session api id")
	// pageWords are what a token is of that opens a page, not an account.
	pageWords = set("page next previous prev continuation pagination cursor sync csrf")
	// handedOut are what a token is of that is handed to the client side
	// by design: a client token, a publishable one.
	handedOut = set("client publishable public")
	// fetchWords are what a token is of that fetches the resource the
	// answer describes, for the caller who may read it already, for a
	// while: GitHub's temp_clone_token in every repository it lists.
	fetchWords = set("clone download preview")
	// answerKeyWords are what a key is of when it is a secret: an API's,
	// a private or secret one, one that signs or opens an account.
	answerKeyWords = set("api private secret access signing encryption master auth")
)

// answer applies what an operation's answer holds: a read whose answer
// holds credentials reveals them to whoever calls it.
func (a *Assessment) answer(doc *spec.Document, v *view) {
	if p := credentialIn(doc, v.op); p != "" {
		a.raise(Privileged, fmt.Sprintf("it reads credentials: its answer holds them (%q)", p))
	}
}

// settings applies what a changing operation changes when it reaches past
// one resource: how long data is kept, how fast it may be used, and the
// settings of a whole organization or account.
func (a *Assessment) settings(v *view) {
	for _, p := range []struct {
		words []string
		where string
	}{{v.pathWords, "in the path"}, {v.named, "in its name"}} {
		for i, w := range p.words {
			next := ""
			if i+1 < len(p.words) {
				next = p.words[i+1]
			}
			switch {
			case w == "retention" || strings.HasSuffix(w, "retention"):
				a.raise(Privileged, fmt.Sprintf("it changes how long data is kept (%q %s)", v.spelt(w), p.where))
				return
			case w == "ratelimit" || w == "ratelimits" || w == "rate" && (next == "limit" || next == "limits"):
				a.raise(Privileged, fmt.Sprintf("it changes rate limits (%q %s)", v.spelt(w), p.where))
				return
			}
		}
	}
	n := len(v.segments)
	if n < 2 {
		return
	}
	last := v.segments[n-1]
	if len(last) == 0 || !settingsWords[last[len(last)-1]] {
		return
	}
	if w := accountNouns.in(v.segments[n-2]); w != "" {
		a.raise(Privileged, fmt.Sprintf("it changes settings of a whole %s (%q of %q in the path)", strings.TrimSuffix(w, "s"), last[len(last)-1], w))
	}
}

// settingsWords are what a path that ends at the settings of what it
// names ends with.
var settingsWords = set("settings setting config configuration preferences policy policies defaults")
