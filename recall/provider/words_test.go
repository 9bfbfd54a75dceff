package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// TestOpenAIWordsMatchTheSpec: whisper-1's form asks for word and segment
// times (timestamp_granularities, values of the spec's enum, with
// verbose_json as the spec requires); the answer's words, shaped as the
// spec's TranscriptionWord, are each kept in the segment they are said
// in, and the gpt-4o models, which take json only, are not asked for
// them.
func TestOpenAIWordsMatchTheSpec(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	if got := stringsOf(schemaOf(t, oai, "TranscriptionWord")["required"]); !slices.Equal(got, []string{"word", "start", "end"}) {
		t.Fatalf("the spec's TranscriptionWord requires %v", got)
	}
	words := schemaOf(t, oai, "CreateTranscriptionResponseVerboseJson")["properties"].(map[string]any)["words"].(map[string]any)
	if ref := words["items"].(map[string]any)["$ref"]; ref != "#/components/schemas/TranscriptionWord" {
		t.Fatalf("verbose_json's words are %v", ref)
	}
	// The spec's example, with the words of its first segment ("The
	// beach was a popular spot on a hot summer day.", 0 to 3.32 s) as
	// whisper-1 gives them: no punctuation.
	var answer map[string]any
	if err := json.Unmarshal(oaiExample(t, oai, "CreateTranscriptionResponseVerboseJson"), &answer); err != nil {
		t.Fatal(err)
	}
	first := answer["segments"].([]any)[0].(map[string]any)["text"].(string)
	var timed []map[string]any
	for i, w := range strings.Fields(first) {
		timed = append(timed, map[string]any{"word": strings.Trim(w, "."), "start": 0.3 * float64(i), "end": 0.3*float64(i) + 0.25})
	}
	answer["words"] = timed
	body, _ := json.Marshal(answer)

	for _, model := range []string{"whisper-1", "gpt-4o-transcribe"} {
		t.Run(model, func(t *testing.T) {
			var mu sync.Mutex
			var problems, granularities []string
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if err := r.ParseMultipartForm(1 << 20); err != nil {
					problems = append(problems, err.Error())
					return
				}
				problems = append(problems, checkForm(t, oai, r.MultipartForm)...)
				granularities = r.MultipartForm.Value["timestamp_granularities[]"]
				if len(granularities) > 0 && r.FormValue("response_format") != "verbose_json" {
					problems = append(problems, "timestamp_granularities without verbose_json")
				}
				if r.FormValue("response_format") == "json" {
					io.WriteString(w, `{"text":"The beach was a popular spot on a hot summer day."}`)
					return
				}
				w.Write(body)
			})
			p := newProvider(t, provider.Options{Name: "openai", BaseURL: url + "/v1", Model: model, APIKey: "k"})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(problems) > 0 {
				t.Fatalf("the form does not match the spec: %s", strings.Join(problems, "; "))
			}
			if model != "whisper-1" {
				if len(granularities) > 0 || len(tr.Segments[0].Words) > 0 {
					t.Fatalf("%s was asked for %v and gave words %+v", model, granularities, tr.Segments[0].Words)
				}
				return
			}
			if !slices.Equal(granularities, []string{"segment", "word"}) {
				t.Errorf("timestamp_granularities %v, want segment and word", granularities)
			}
			got := tr.Segments[0].Words
			if len(got) != len(timed) || got[0] != (recording.Word{Start: 0, End: 250 * time.Millisecond, Text: "The"}) ||
				got[len(got)-1].Text != "day" || got[len(got)-1].Start != 3*time.Second {
				t.Fatalf("the first segment's words %+v", got)
			}
		})
	}
}

// TestWordsGoToTheirSegments: a word belongs to the segment its middle
// is said in, even where the provider timed it a little past its
// segment's start or end.
func TestWordsGoToTheirSegments(t *testing.T) {
	tr, err := provider.ParseVerboseJSON([]byte(`{"text":"one two. three","duration":3,
		"segments":[{"start":0,"end":1.5,"text":" one two."},{"start":1.5,"end":3,"text":" three"}],
		"words":[{"word":"one","start":0,"end":0.6},{"word":"two","start":0.7,"end":1.6},{"word":"three","start":1.4,"end":2.5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range tr.Segments {
		var ws []string
		for _, w := range s.Words {
			ws = append(ws, w.Text)
		}
		got = append(got, strings.Join(ws, " "))
	}
	if !slices.Equal(got, []string{"one two", "three"}) {
		t.Fatalf("words by segment %q", got)
	}
}

// TestAssemblyAIWordsAreKept: each segment keeps its words as the spec's
// TranscriptWord gives them: times in milliseconds, the confidence it
// requires, the speaker when labelled.
func TestAssemblyAIWordsAreKept(t *testing.T) {
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	word := schemaOf(t, aai, "TranscriptWord")
	for _, f := range []string{"confidence", "start", "end", "text", "speaker"} {
		if !slices.Contains(stringsOf(word["required"]), f) {
			t.Fatalf("the spec's TranscriptWord does not require %s", f)
		}
	}
	if desc := word["properties"].(map[string]any)["start"].(map[string]any)["description"].(string); !strings.Contains(desc, "milliseconds") {
		t.Fatalf("TranscriptWord's start is %q", desc)
	}
	url, _ := assemblyAI(t, `{"id":"j1","status":"completed","text":"Hello there. Hi.","audio_duration":2,"words":[
		{"text":"Hello","start":100,"end":400,"confidence":0.91,"speaker":"A"},
		{"text":"there.","start":450,"end":800,"confidence":0.5,"speaker":"A"},
		{"text":"Hi.","start":900,"end":1100,"confidence":0,"speaker":"B"}]}`)
	p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-3-pro", APIKey: "k", PollEvery: time.Millisecond, Speakers: 2})
	tr, err := p.Transcribe(context.Background(), chunk(t))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"Hello 100ms-400ms A 0.91", "there. 450ms-800ms A 0.5"}, {"Hi. 900ms-1.1s B 0"}}
	if got := wordsOf(tr); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("words %q, want %q", got, want)
	}
}

// TestDeepgramWordsAreKept: the SDK's recorded answer (words of the
// alternative, no utterances) gives segments that keep their words,
// punctuated as smart_format gives them, with their confidence; an
// utterance keeps its own words, as the SDK's type of them has them
// (punctuated_word, an integer speaker).
func TestDeepgramWordsAreKept(t *testing.T) {
	sdkTypes, err := os.ReadFile(filepath.Join("testdata", "deepgram", "words-items-v7.6.0.py"))
	if err != nil {
		t.Fatal(err)
	}
	for class, fields := range map[string][]string{
		"ListenV1ResponseResultsUtterancesItemWordsItem":               {"word", "start", "end", "confidence", "speaker", "punctuated_word"},
		"ListenV1ResponseResultsChannelsItemAlternativesItemWordsItem": {"word", "start", "end", "confidence"},
	} {
		_, body, ok := strings.Cut(string(sdkTypes), "class "+class+"(")
		body, _, _ = strings.Cut(body, "if IS_PYDANTIC_V2")
		for _, f := range fields {
			if !ok || !regexp.MustCompile(`(?m)^\s+`+f+`: typing\.Optional\[`).MatchString(body) {
				t.Fatalf("the SDK's %s has no %s", class, f)
			}
		}
	}
	answer, err := os.ReadFile(filepath.Join("testdata", "deepgram", "listen-response-v3.9.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	utterances := `{"metadata":{"request_id":"r1","duration":3},"results":{"channels":[{"alternatives":[{"transcript":"Hello there. Hi."}]}],
		"utterances":[{"start":0.1,"end":0.8,"transcript":"Hello there.","speaker":0,"channel":0,"words":[
			{"word":"hello","start":0.1,"end":0.4,"confidence":0.9,"speaker":0,"speaker_confidence":0.8,"punctuated_word":"Hello"},
			{"word":"there","start":0.45,"end":0.8,"confidence":0.8,"speaker":0,"speaker_confidence":0.8,"punctuated_word":"there."}]},
		{"start":0.9,"end":1.2,"transcript":"Hi.","speaker":1,"channel":0,"words":[
			{"word":"hi","start":0.9,"end":1.2,"confidence":0.7,"speaker":1,"speaker_confidence":0.6,"punctuated_word":"Hi."}]}]}}`
	for name, body := range map[string]string{"sdk": string(answer), "utterances": utterances} {
		t.Run(name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				io.WriteString(w, body)
			})
			p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-2", APIKey: "k", Speakers: provider.SpeakersUnknown})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			if err != nil {
				t.Fatal(err)
			}
			got := wordsOf(tr)
			if name == "utterances" {
				want := [][]string{{"Hello 100ms-400ms A 0.9", "there. 450ms-800ms A 0.8"}, {"Hi. 900ms-1.2s B 0.7"}}
				if !slices.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("words %q, want %q", got, want)
				}
				return
			}
			// The SDK's answer: "Yep." from 5.52 s to 6.02 s, confidence
			// 0.9984803, is the first segment, alone.
			if len(got) < 2 || !slices.Equal(got[0], []string{"Yep. 5.52s-6.02s  0.9984803"}) {
				t.Fatalf("words %q", got)
			}
			for i, s := range tr.Segments {
				var texts []string
				for _, w := range s.Words {
					texts = append(texts, w.Text)
				}
				if strings.Join(texts, " ") != s.Text {
					t.Errorf("segment %d is %q, its words %q", i, s.Text, texts)
				}
			}
		})
	}
}

// wordsOf returns each segment's words as "text start-end speaker
// confidence".
func wordsOf(tr recording.Transcript) [][]string {
	var out [][]string
	for _, s := range tr.Segments {
		var ws []string
		for _, w := range s.Words {
			c := "-"
			if w.Confidence != nil {
				c = fmt.Sprint(*w.Confidence)
			}
			ws = append(ws, fmt.Sprintf("%s %s-%s %s %s", w.Text, w.Start, w.End, w.Speaker, c))
		}
		out = append(out, ws)
	}
	return out
}

// TestOpenAICompatibleWordTimes: Groq and speaches are asked for word
// times as their own code reads the form (Groq's SDK types
// timestamp_granularities as a list of "word" and "segment", with
// verbose_json; speaches asserts the list is one of its combinations),
// and the words of their verbose_json are kept.
func TestOpenAICompatibleWordTimes(t *testing.T) {
	groq, err := os.ReadFile(filepath.Join("testdata", "groq", "transcription_create_params.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(groq), `timestamp_granularities: List[Literal["word", "segment"]]`) {
		t.Fatal("Groq's SDK no longer types timestamp_granularities as word and segment")
	}
	speaches, err := os.ReadFile(filepath.Join("testdata", "speaches", "timestamp-granularities-excerpt.py"))
	if err != nil {
		t.Fatal(err)
	}
	var combinations [][]string
	for _, m := range regexp.MustCompile(`(?m)^\s+(\[[^\]]*\]),`).FindAllStringSubmatch(string(speaches), -1) {
		var c []string
		if err := json.Unmarshal([]byte(m[1]), &c); err != nil {
			t.Fatalf("speaches' combination %s: %v", m[1], err)
		}
		combinations = append(combinations, c)
	}
	if len(combinations) < 2 {
		t.Fatalf("speaches' combinations not found: %v", combinations)
	}
	accepts := map[string]func([]string) bool{
		"groq": func(g []string) bool {
			for _, v := range g {
				if v != "word" && v != "segment" {
					return false
				}
			}
			return true
		},
		"speaches": func(g []string) bool {
			return slices.ContainsFunc(combinations, func(c []string) bool { return slices.Equal(c, g) })
		},
	}
	for name, ok := range accepts {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var granularities []string
			var format string
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if err := r.ParseMultipartForm(1 << 20); err != nil {
					t.Error(err)
				}
				granularities, format = r.MultipartForm.Value["timestamp_granularities[]"], r.FormValue("response_format")
				io.WriteString(w, `{"task":"transcribe","language":"english","duration":1.5,"text":"hello there",
					"segments":[{"id":0,"seek":0,"start":0.5,"end":1.5,"text":" hello there","tokens":[1],"temperature":0,"avg_logprob":-0.1,"compression_ratio":1,"no_speech_prob":0.01}],
					"words":[{"word":"hello","start":0.5,"end":0.9},{"word":"there","start":1.0,"end":1.4}]}`)
			})
			reg, _ := provider.Lookup(name)
			p := newProvider(t, provider.Options{Name: name, BaseURL: url + "/v1", Model: reg.DefaultModel, APIKey: "k"})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(granularities, "word") || !ok(granularities) || format != "verbose_json" {
				t.Errorf("asked for timestamp_granularities[] %q with %s", granularities, format)
			}
			if len(tr.Segments) != 1 || len(tr.Segments[0].Words) != 2 || tr.Segments[0].Words[1].Start != time.Second {
				t.Errorf("the words are not kept: %+v", tr.Segments)
			}
		})
	}
}
