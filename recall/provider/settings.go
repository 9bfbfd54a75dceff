package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// The options a request may ask for beyond its provider and model, by
// the names the prices file prices them under.
const (
	OptionLanguage   = "language"
	OptionSpeakers   = "speakers"
	OptionPrompt     = "prompt"
	OptionVocabulary = "vocabulary"
)

// OptionNames are the options, in the order Settings writes them.
var OptionNames = []string{OptionLanguage, OptionSpeakers, OptionPrompt, OptionVocabulary}

// Settings returns the canonical form of o's settings that change what is
// transcribed: the language, the speakers (and their expected count), the
// prompt and the vocabulary, in that order, comma-separated; "" for none.
// The prompt and the vocabulary are written as a digest of what is sent,
// so that a long text makes a short name: "language=pt,speakers=2,
// prompt=3f2a…". The same settings always give the same form. The
// timeout, the key and where the provider is do not count: they change
// how a request is sent, not what it transcribes.
func (o Options) Settings() string {
	var parts []string
	if l := strings.TrimSpace(o.Hints.Language); l != "" {
		parts = append(parts, "language="+strings.ToLower(strings.ReplaceAll(l, "_", "-")))
	}
	switch {
	case o.Speakers == SpeakersUnknown:
		parts = append(parts, "speakers")
	case o.Speakers > 0:
		parts = append(parts, "speakers="+strconv.Itoa(o.Speakers))
	}
	if p := strings.TrimSpace(o.Hints.Prompt); p != "" {
		parts = append(parts, "prompt="+digest(p))
	}
	if len(o.Hints.Vocabulary) > 0 {
		parts = append(parts, "vocabulary="+digest(strings.Join(o.Hints.Vocabulary, "\n")))
	}
	return strings.Join(parts, ",")
}

// Asked returns the names of the options o asks for, in the order of
// OptionNames: those a provider may bill apart, as Settings names them.
func (o Options) Asked() []string {
	var asked []string
	for part := range strings.SplitSeq(o.Settings(), ",") {
		if name, _, _ := strings.Cut(part, "="); name != "" {
			asked = append(asked, name)
		}
	}
	return asked
}

// digest names a text by the first 12 hex digits of its SHA-256.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// Settings returns the canonical form of the settings the provider was
// made with ([Options.Settings]): with its name and model, what a
// transcript it makes is.
func (p *Provider) Settings() string { return p.settings }
