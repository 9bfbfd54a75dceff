package provider_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/recall/provider"
)

// TestSettingsAreCanonical: the settings that change what is transcribed
// have one form, whatever way they were written, that tells apart any two
// that differ; what does not change the transcript does not count.
func TestSettingsAreCanonical(t *testing.T) {
	t.Parallel()
	if s := (provider.Options{Name: "openai", Model: "whisper-1", Timeout: 5, APIKey: "sk"}).Settings(); s != "" {
		t.Errorf("the defaults: %q; want none", s)
	}
	all := provider.Options{Speakers: 2, Hints: provider.Hints{Language: "pt_BR", Prompt: " A talk. ", Vocabulary: []string{"Rubicon", "recall"}}}
	s := all.Settings()
	parts := strings.Split(s, ",")
	if len(parts) != 4 || parts[0] != "language=pt-br" || parts[1] != "speakers=2" || !strings.HasPrefix(parts[2], "prompt=") || !strings.HasPrefix(parts[3], "vocabulary=") ||
		strings.Contains(s, "A talk") || len(parts[2]) != len("prompt=")+12 {
		t.Fatalf("every setting: %q; want language, speakers, and digests of the prompt and vocabulary, in order", s)
	}
	same := all
	same.Hints.Language, same.Hints.Prompt = "PT-br", "A talk."
	if same.Settings() != s {
		t.Errorf("the same settings written otherwise: %q, %q", same.Settings(), s)
	}
	for name, o := range map[string]provider.Options{
		"speakers without a count": {Speakers: provider.SpeakersUnknown, Hints: all.Hints},
		"another prompt":           {Speakers: 2, Hints: provider.Hints{Language: "pt-BR", Prompt: "A lecture.", Vocabulary: all.Hints.Vocabulary}},
		"another vocabulary":       {Speakers: 2, Hints: provider.Hints{Language: "pt-BR", Prompt: "A talk.", Vocabulary: []string{"Rubicon"}}},
		"no language":              {Speakers: 2, Hints: provider.Hints{Prompt: "A talk.", Vocabulary: all.Hints.Vocabulary}},
	} {
		if o.Settings() == s || o.Settings() == "" {
			t.Errorf("%s: %q, the same as %q", name, o.Settings(), s)
		}
	}
	if got := all.Asked(); !slices.Equal(got, provider.OptionNames) {
		t.Errorf("the options asked for: %v", got)
	}
	if got := (provider.Options{Speakers: provider.SpeakersUnknown}).Asked(); !slices.Equal(got, []string{provider.OptionSpeakers}) {
		t.Errorf("speakers alone: %v", got)
	}
}
