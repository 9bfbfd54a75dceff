package provider_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/provider"
)

// TestOpenAIHints: the language and the prompt, with the vocabulary's
// terms after it, go as form fields that CreateTranscriptionRequest
// describes.
func TestOpenAIHints(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	props := schemaOf(t, oai, "CreateTranscriptionRequest")["properties"].(map[string]any)
	var mu sync.Mutex
	fields := map[string]string{}
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			t.Error(err)
		}
		for k, v := range r.MultipartForm.Value {
			fields[k] = v[0]
		}
		io.WriteString(w, `{"task":"transcribe","language":"portuguese","duration":1,"text":"olá","segments":[{"id":0,"start":0,"end":1,"text":"olá"}]}`)
	})
	p := newProvider(t, provider.Options{Name: "openai", BaseURL: url, Model: "whisper-1", APIKey: "k",
		Hints: provider.Hints{Language: "pt", Prompt: "Uma entrevista sobre arquivos.", Vocabulary: []string{"Rubicon", "recall-archive"}}})
	if _, err := p.Transcribe(context.Background(), chunk(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k := range fields {
		if _, ok := props[strings.TrimSuffix(k, "[]")]; !ok {
			t.Errorf("form field %s is not in CreateTranscriptionRequest", k)
		}
	}
	if fields["language"] != "pt" || fields["prompt"] != "Uma entrevista sobre arquivos. Rubicon, recall-archive." {
		t.Errorf("language %q, prompt %q", fields["language"], fields["prompt"])
	}
}

// TestDeepgramHints: the language and the vocabulary go as query
// parameters that the SDK's mapping of /v1/listen names: keyterm for
// Nova-3, keywords before it.
func TestDeepgramHints(t *testing.T) {
	mapping, err := os.ReadFile(filepath.Join("testdata", "deepgram", "wiremock-mappings.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"nova-3", "nova-2"} {
		var query map[string][]string
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			query = r.URL.Query()
			io.WriteString(w, `{"metadata":{"request_id":"r1","duration":1},"results":{"channels":[{"alternatives":[{"transcript":"hola"}]}]}}`)
		})
		p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: model, APIKey: "k",
			Hints: provider.Hints{Language: "es-419", Vocabulary: []string{"Rubicon", "recall archive"}}})
		if _, err := p.Transcribe(context.Background(), chunk(t)); err != nil {
			t.Fatal(err)
		}
		terms := "keyterm"
		if model != "nova-3" {
			terms = "keywords"
		}
		for k := range query {
			if !strings.Contains(string(mapping), `"`+k+`": {`) {
				t.Errorf("%s: parameter %s is not in the SDK's mapping", model, k)
			}
		}
		if query["language"][0] != "es-419" || !slices.Equal(query[terms], []string{"Rubicon", "recall archive"}) {
			t.Errorf("%s: query %v", model, query)
		}
	}
}

// TestAssemblyAIHints: the language as language_code (a value of the
// spec's TranscriptLanguageCode), the prompt and the key terms as
// keyterms_prompt, all fields of TranscriptOptionalParams.
func TestAssemblyAIHints(t *testing.T) {
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	props := schemaOf(t, aai, "TranscriptOptionalParams")["properties"].(map[string]any)
	codes := stringsOf(schemaOf(t, aai, "TranscriptLanguageCode")["enum"])
	url, job := assemblyAI(t, `{"id":"j1","status":"completed","text":"G'day.","audio_duration":1,"words":[{"text":"G'day.","start":0,"end":500,"confidence":0.9}]}`)
	p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-3-pro", APIKey: "k", PollEvery: time.Millisecond,
		Hints: provider.Hints{Language: "en-AU", Prompt: "A talk about archives.", Vocabulary: []string{"Rubicon", "recall archive"}}})
	if _, err := p.Transcribe(context.Background(), chunk(t)); err != nil {
		t.Fatal(err)
	}
	sent := job()
	for k := range sent {
		if _, ok := props[k]; !ok && k != "audio_url" {
			t.Errorf("field %s is not in TranscriptParams", k)
		}
	}
	if code, _ := sent["language_code"].(string); !slices.Contains(codes, code) {
		t.Errorf("language_code %v is not one of the spec's %d codes", sent["language_code"], len(codes))
	}
	if sent["prompt"] != "A talk about archives." || !slices.Equal(anyStrings(sent["keyterms_prompt"]), []string{"Rubicon", "recall archive"}) {
		t.Errorf("prompt %v, keyterms %v", sent["prompt"], sent["keyterms_prompt"])
	}
}

// TestHintsPastTheirLimits: a hint a provider does not take, or past the
// limits it documents, is refused before anything is sent, saying why.
func TestHintsPastTheirLimits(t *testing.T) {
	many := make([]string, 201)
	for i := range many {
		many[i] = "term"
	}
	for _, c := range []struct {
		name, model string
		hints       provider.Hints
		want        string
	}{
		{"openai", "whisper-1", provider.Hints{Language: "pt-BR"}, "two-letter ISO-639-1"},
		{"localai", "whisper-1", provider.Hints{Language: "en"}, "takes no language"},
		{"deepgram", "nova-3", provider.Hints{Prompt: "context"}, "takes no prompt"},
		{"assemblyai", "universal-2", provider.Hints{Prompt: "context"}, "universal-2 takes no prompt"},
		{"assemblyai", "universal-2", provider.Hints{Vocabulary: many}, "holds 201 terms; it takes at most 200"},
		{"deepgram", "nova-3", provider.Hints{Vocabulary: many[:101]}, "deepgram/nova-3 holds 101 terms; it takes at most 100"},
		{"deepgram", "nova-2", provider.Hints{Vocabulary: many[:101]}, "deepgram/nova-2 holds 101 terms; it takes at most 100"},
		{"assemblyai", "universal-3-pro", provider.Hints{Vocabulary: []string{"one two three four five six seven"}}, "has 7 words; a term takes at most 6"},
		{"assemblyai", "universal-3-pro", provider.Hints{Prompt: strings.Repeat("word ", 1501)}, "holds 1501 words; it takes at most 1500"},
	} {
		_, err := provider.New(provider.Options{Name: c.name, BaseURL: "http://127.0.0.1:9", Model: c.model, Hints: c.hints})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s/%s %+v: %v; want %q", c.name, c.model, c.hints.Language, err, c.want)
		}
	}
}
