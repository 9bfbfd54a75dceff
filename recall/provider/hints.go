package provider

import (
	"fmt"
	"regexp"
	"strings"
)

// hintRules say which hints a provider takes, under which parameters,
// and within which of its documented limits.
type hintRules struct {
	// language, prompt and vocabulary name the parameters; empty when the
	// provider does not take the hint.
	language, prompt, vocabulary string
	// languageForm checks a language code and writes it as the provider
	// takes it.
	languageForm func(code string) (string, error)
	// promptWords bounds the prompt in words; 0 leaves it unbounded.
	// promptModels, if set, says which models take a prompt.
	promptWords  int
	promptModels func(model string) bool
	// vocabularyItems bounds the vocabulary per model; nil leaves it
	// unbounded. phraseWords bounds each phrase in words.
	vocabularyItems func(model string) int
	phraseWords     int
}

var (
	iso6391  = regexp.MustCompile(`^[a-z]{2}$`)
	bcp47ish = regexp.MustCompile(`^[a-z]{2,3}([-_][a-zA-Z0-9]{2,8})?$`)
)

// twoLetters takes an ISO-639-1 code, as OpenAI's API documents.
func twoLetters(code string) (string, error) {
	if !iso6391.MatchString(code) {
		return "", fmt.Errorf("give the language as a two-letter ISO-639-1 code, such as en or pt")
	}
	return code, nil
}

// asGiven takes a language code with an optional region, as Deepgram's
// language parameter does (en, en-US).
func asGiven(code string) (string, error) {
	if !bcp47ish.MatchString(code) {
		return "", fmt.Errorf("give the language as a code such as en or en-US")
	}
	return code, nil
}

// underscored writes a code as AssemblyAI's language_code takes it:
// lower case, the region after an underscore (en_us).
func underscored(code string) (string, error) {
	if !bcp47ish.MatchString(code) {
		return "", fmt.Errorf("give the language as a code such as en or en_us")
	}
	return strings.ToLower(strings.ReplaceAll(code, "-", "_")), nil
}

// openAIHints are the hints of OpenAI-compatible servers: language and
// prompt form fields; the vocabulary goes into the prompt, which is where
// these models take words to spell.
var openAIHints = hintRules{language: "language", prompt: "prompt", vocabulary: "prompt", languageForm: twoLetters}

// Hints describes, for the help and the documentation, the hints the
// provider takes and their parameters.
func (r Registration) Hints() string {
	h := r.hints
	var parts []string
	if h.language != "" {
		parts = append(parts, "--language as "+h.language)
	}
	if h.prompt != "" {
		parts = append(parts, "--prompt as "+h.prompt)
	}
	if h.vocabulary != "" {
		parts = append(parts, "--vocabulary as "+h.vocabulary)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// CheckHints refuses the hints that the provider does not take with
// model, or that pass its documented limits, saying which and why.
func (r Registration) CheckHints(model string, h Hints) error {
	rules := r.hints
	refuse := func(flag, what string) error {
		return fmt.Errorf("provider %s takes no %s: leave %s out (it takes %s)", r.Name, what, flag, r.Hints())
	}
	if h.Language != "" {
		if rules.language == "" {
			return refuse("--language", "language")
		}
		if _, err := rules.languageForm(h.Language); err != nil {
			return fmt.Errorf("--language %q for %s: %v", h.Language, r.Name, err)
		}
	}
	if h.Prompt != "" {
		if rules.prompt == "" {
			return refuse("--prompt", "prompt")
		}
		if rules.promptModels != nil && !rules.promptModels(model) {
			return fmt.Errorf("--prompt: %s/%s takes no prompt; leave it out, or use --vocabulary", r.Name, model)
		}
		if n := len(strings.Fields(h.Prompt)); rules.promptWords > 0 && n > rules.promptWords {
			return fmt.Errorf("--prompt for %s holds %d words; it takes at most %d: shorten it", r.Name, n, rules.promptWords)
		}
	}
	if len(h.Vocabulary) > 0 {
		if rules.vocabulary == "" {
			return refuse("--vocabulary", "vocabulary")
		}
		if rules.vocabulary == rules.prompt && rules.promptModels != nil && !rules.promptModels(model) {
			return fmt.Errorf("--vocabulary: %s/%s takes no prompt, where the terms would go; leave it out", r.Name, model)
		}
		if rules.vocabularyItems != nil {
			if most := rules.vocabularyItems(model); len(h.Vocabulary) > most {
				return fmt.Errorf("--vocabulary for %s/%s holds %d terms; it takes at most %d: keep the ones that matter most", r.Name, model, len(h.Vocabulary), most)
			}
		}
		for _, term := range h.Vocabulary {
			if n := len(strings.Fields(term)); rules.phraseWords > 0 && n > rules.phraseWords {
				return fmt.Errorf("--vocabulary for %s: %q has %d words; a term takes at most %d", r.Name, term, n, rules.phraseWords)
			}
		}
	}
	return nil
}

// joinedPrompt is the prompt an OpenAI-compatible server gets: the prompt,
// then the vocabulary's terms.
func joinedPrompt(h Hints) string {
	parts := []string{}
	if h.Prompt != "" {
		parts = append(parts, h.Prompt)
	}
	if len(h.Vocabulary) > 0 {
		parts = append(parts, strings.Join(h.Vocabulary, ", ")+".")
	}
	return strings.Join(parts, " ")
}
