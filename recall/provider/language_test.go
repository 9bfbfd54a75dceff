package provider_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/provider"
)

// TestLanguageTag: however a provider writes the language (a code with a
// region in either case and separator, or Whisper's English name), it
// becomes one BCP 47 tag; what is neither is kept as written.
func TestLanguageTag(t *testing.T) {
	for said, want := range map[string]string{
		"en": "en", "EN": "en", "en_us": "en-US", "pt-br": "pt-BR", "es-419": "es-419",
		"english": "en", "English": "en", " portuguese ": "pt", "cantonese": "yue", "javanese": "jv", "haitian creole": "ht",
		"": "", "multi": "multi",
	} {
		if got := provider.LanguageTag(said); got != want {
			t.Errorf("LanguageTag(%q) = %q, want %q", said, got, want)
		}
	}
}

// TestOpenAIDetectedLanguage: whisper-1's verbose_json names the language
// it detected (CreateTranscriptionResponseVerboseJson's language, in
// English words), gpt-transcribe's json lists them (languages, each a
// TranscriptionLanguage's code); the form asks for none when none was
// given.
func TestOpenAIDetectedLanguage(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	if _, ok := schemaOf(t, oai, "CreateTranscriptionResponseVerboseJson")["properties"].(map[string]any)["language"]; !ok {
		t.Fatal("the spec's verbose_json has no language")
	}
	if _, ok := schemaOf(t, oai, "TranscriptionLanguage")["properties"].(map[string]any)["code"]; !ok {
		t.Fatal("the spec's TranscriptionLanguage has no code")
	}
	for _, c := range []struct{ model, answer, want string }{
		{"whisper-1", `{"task":"transcribe","language":"german","duration":1,"text":"hallo","segments":[{"id":0,"start":0,"end":1,"text":"hallo"}]}`, "de"},
		{"gpt-transcribe", `{"text":"bonjour","languages":[{"code":"fr"}]}`, "fr"},
		{"gpt-4o-transcribe", `{"text":"hello"}`, ""},
	} {
		var mu sync.Mutex
		var asked []string
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if err := r.ParseMultipartForm(32 << 20); err != nil {
				t.Error(err)
			}
			asked = r.MultipartForm.Value["language"]
			io.WriteString(w, c.answer)
		})
		p := newProvider(t, provider.Options{Name: "openai", BaseURL: url, Model: c.model, APIKey: "k"})
		tr, err := p.Transcribe(context.Background(), chunk(t))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(asked) > 0 {
			t.Errorf("%s: the form asks for language %v, given none", c.model, asked)
		}
		mu.Unlock()
		if tr.Language != c.want {
			t.Errorf("%s: language %q, want %q", c.model, tr.Language, c.want)
		}
	}
}

// TestAssemblyAIDetectedLanguage: given no language, the job asks for
// language_detection, which AssemblyAI otherwise leaves off (it takes the
// audio for en_us), and the transcript's language_code is the one
// detected; given one, it goes as language_code without detection, and
// is the transcript's.
func TestAssemblyAIDetectedLanguage(t *testing.T) {
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	params := schemaOf(t, aai, "TranscriptOptionalParams")["properties"].(map[string]any)
	if _, ok := params["language_detection"]; !ok {
		t.Fatal("the spec's TranscriptOptionalParams has no language_detection")
	}
	if _, ok := schemaOf(t, aai, "Transcript")["properties"].(map[string]any)["language_code"]; !ok {
		t.Fatal("the spec's Transcript has no language_code")
	}
	for _, c := range []struct{ asked, answered, want string }{
		{"", "es", "es"},
		{"pt-BR", "pt", "pt"},
		{"en-AU", "en_au", "en-AU"},
	} {
		url, job := assemblyAI(t, `{"id":"j1","status":"completed","text":"Hola.","audio_duration":1,"language_code":"`+c.answered+`","language_confidence":0.98,
			"words":[{"text":"Hola.","start":0,"end":500,"confidence":0.9}]}`)
		p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-3-pro", APIKey: "k", PollEvery: time.Millisecond,
			Hints: provider.Hints{Language: c.asked}})
		tr, err := p.Transcribe(context.Background(), chunk(t))
		if err != nil {
			t.Fatal(err)
		}
		sent := job()
		detect, _ := sent["language_detection"].(bool)
		if _, coded := sent["language_code"]; detect == (c.asked != "") || coded == (c.asked == "") {
			t.Errorf("asked %q: sent language_detection %v, language_code %v", c.asked, sent["language_detection"], sent["language_code"])
		}
		if tr.Language != c.want {
			t.Errorf("asked %q, answered %q: language %q, want %q", c.asked, c.answered, tr.Language, c.want)
		}
	}
}

// TestDeepgramDetectedLanguage: given no language, /v1/listen is asked to
// detect_language (a parameter of the SDK's mapping), and a channel's
// detected_language (a field of the SDK's channel type) is the
// transcript's; given one, it is sent as language, and is the
// transcript's, Deepgram naming none back.
func TestDeepgramDetectedLanguage(t *testing.T) {
	mapping, err := os.ReadFile(filepath.Join("testdata", "deepgram", "wiremock-mappings.json"))
	if err != nil {
		t.Fatal(err)
	}
	channel, err := os.ReadFile(filepath.Join("testdata", "deepgram", "channels-item-v7.6.0.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mapping), `"detect_language": {`) || !strings.Contains(string(channel), "detected_language: typing.Optional[str]") {
		t.Fatal("the SDK no longer names detect_language and detected_language")
	}
	for _, c := range []struct{ asked, answer, want string }{
		{"", `{"metadata":{"request_id":"r1","duration":1},"results":{"channels":[{"alternatives":[{"transcript":"hallo"}],"detected_language":"de"}]}}`, "de"},
		{"es-419", `{"metadata":{"request_id":"r1","duration":1},"results":{"channels":[{"alternatives":[{"transcript":"hola"}]}]}}`, "es-419"},
	} {
		var mu sync.Mutex
		var query map[string][]string
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			query = r.URL.Query()
			mu.Unlock()
			io.WriteString(w, c.answer)
		})
		p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-3", APIKey: "k", Hints: provider.Hints{Language: c.asked}})
		tr, err := p.Transcribe(context.Background(), chunk(t))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		detect, language := query["detect_language"], query["language"]
		mu.Unlock()
		if (len(detect) == 1 && detect[0] == "true") == (c.asked != "") || (len(language) == 1 && language[0] == c.asked) == (c.asked == "") {
			t.Errorf("asked %q: detect_language %v, language %v", c.asked, detect, language)
		}
		if tr.Language != c.want {
			t.Errorf("asked %q: language %q, want %q", c.asked, tr.Language, c.want)
		}
	}
}
