package provider_test

import (
	"context"
	"encoding/json"
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
)

// TestAssemblyAISpeakers: with speakers asked for, the transcript request
// sets speaker_labels and speakers_expected as TranscriptOptionalParams
// types them; the words' speakers (TranscriptWord.speaker) split the
// segments at each change of speaker and label them.
func TestAssemblyAISpeakers(t *testing.T) {
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	props := schemaOf(t, aai, "TranscriptOptionalParams")["properties"].(map[string]any)
	if typ := props["speaker_labels"].(map[string]any)["type"]; typ != "boolean" {
		t.Fatalf("the spec types speaker_labels %v", typ)
	}
	if typ := props["speakers_expected"].(map[string]any)["type"]; !slices.Contains(anyStrings(typ), "integer") {
		t.Fatalf("the spec types speakers_expected %v", typ)
	}
	if _, ok := schemaOf(t, aai, "TranscriptWord")["properties"].(map[string]any)["speaker"]; !ok {
		t.Fatal("the spec's TranscriptWord has no speaker")
	}
	for _, speakers := range []int{provider.SpeakersUnknown, 2} {
		url, job := assemblyAI(t, `{"id":"j1","status":"completed","text":"Hello there. Hi, how are you","audio_duration":3,"words":[
			{"text":"Hello","start":100,"end":400,"confidence":0.9,"speaker":"A"},
			{"text":"there.","start":400,"end":800,"confidence":0.9,"speaker":"A"},
			{"text":"Hi,","start":900,"end":1100,"confidence":0.9,"speaker":"B"},
			{"text":"how","start":1100,"end":1300,"confidence":0.9,"speaker":"B"},
			{"text":"are","start":1300,"end":1500,"confidence":0.9,"speaker":"B"},
			{"text":"you","start":1500,"end":1800,"confidence":0.9,"speaker":"A"}]}`)
		p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-3-pro", APIKey: "k", PollEvery: time.Millisecond, Speakers: speakers})
		tr, err := p.Transcribe(context.Background(), chunk(t))
		if err != nil {
			t.Fatal(err)
		}
		sent := job()
		for k := range sent {
			if _, ok := props[k]; !ok && k != "audio_url" {
				t.Errorf("speakers %d: field %s is not in TranscriptParams", speakers, k)
			}
		}
		if sent["speaker_labels"] != true {
			t.Errorf("speakers %d: speaker_labels %v", speakers, sent["speaker_labels"])
		}
		if got, want := sent["speakers_expected"], any(float64(speakers)); (speakers > 0 && got != want) || (speakers < 0 && got != nil) {
			t.Errorf("speakers %d: speakers_expected %v", speakers, got)
		}
		var turns []string
		for _, s := range tr.Segments {
			turns = append(turns, s.Speaker+": "+s.Text)
		}
		if want := []string{"A: Hello there.", "B: Hi, how are", "A: you"}; !slices.Equal(turns, want) {
			t.Errorf("speakers %d: segments %q, want %q", speakers, turns, want)
		}
	}
}

// assemblyAI stands in for AssemblyAI on loopback: an upload, a job, and
// completed, the job's answer to every poll. job returns the body of the
// last job created.
func assemblyAI(t *testing.T, completed string) (url string, job func() map[string]any) {
	var mu sync.Mutex
	var sent map[string]any
	url = serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/v2/upload":
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, `{"upload_url":"https://cdn.assemblyai.com/upload/u-1"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/v2/transcript":
			json.NewDecoder(r.Body).Decode(&sent)
			io.WriteString(w, `{"id":"j1","status":"queued"}`)
		default:
			io.WriteString(w, completed)
		}
	})
	return url, func() map[string]any { mu.Lock(); defer mu.Unlock(); return sent }
}

// TestDeepgramSpeakers: with speakers asked for, the request adds diarize
// (a parameter the SDK's mapping of /v1/listen names); an utterance's
// speaker, an integer in the SDK's type, labels its segment, counted from
// A.
func TestDeepgramSpeakers(t *testing.T) {
	sdkType, err := os.ReadFile(filepath.Join("testdata", "deepgram", "utterances-item-v7.6.0.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+speaker: typing\.Optional\[int\]`).Match(sdkType) {
		t.Fatal("the SDK's utterance no longer has an integer speaker")
	}
	mapping, err := os.ReadFile(filepath.Join("testdata", "deepgram", "wiremock-mappings.json"))
	if err != nil || !strings.Contains(string(mapping), `"diarize": {`) {
		t.Fatalf("the SDK's mapping of /v1/listen names no diarize parameter (%v)", err)
	}
	var query string
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		query = r.URL.RawQuery
		io.WriteString(w, `{"metadata":{"request_id":"r1","duration":3},"results":{"channels":[{"alternatives":[{"transcript":"hello there hi"}]}],
			"utterances":[{"start":0.1,"end":0.8,"transcript":"Hello there.","speaker":0,"channel":0},{"start":0.9,"end":1.8,"transcript":"Hi.","speaker":1,"channel":0}]}}`)
	})
	p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-3", APIKey: "k", Speakers: 3})
	tr, err := p.Transcribe(context.Background(), chunk(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(query, "diarize=true") {
		t.Errorf("query %s: no diarize=true", query)
	}
	if len(tr.Segments) != 2 || tr.Segments[0].Speaker != "A" || tr.Segments[1].Speaker != "B" {
		t.Errorf("segments %+v: want speakers A and B", tr.Segments)
	}
}

// TestOpenAIDiarizedJSON: with gpt-4o-transcribe-diarize, the request
// asks for diarized_json with chunking_strategy auto, fields of
// CreateTranscriptionRequest and values its enums allow; the answer's
// segments (TranscriptionDiarizedSegment) keep their speakers.
func TestOpenAIDiarizedJSON(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	props := schemaOf(t, oai, "CreateTranscriptionRequest")["properties"].(map[string]any)
	formats := stringsOf(schemaOf(t, oai, "AudioResponseFormat")["enum"])
	if !slices.Contains(formats, "diarized_json") {
		t.Fatalf("AudioResponseFormat %v has no diarized_json", formats)
	}
	segment := schemaOf(t, oai, "TranscriptionDiarizedSegment")
	if !slices.Contains(stringsOf(segment["required"]), "speaker") {
		t.Fatal("the spec's diarized segment does not require a speaker")
	}
	var mu sync.Mutex
	fields := map[string]string{}
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		r.ParseMultipartForm(32 << 20)
		for k, v := range r.MultipartForm.Value {
			fields[k] = v[0]
		}
		io.WriteString(w, `{"task":"transcribe","duration":2.5,"text":"Hello there. Hi.","segments":[
			{"type":"transcript.text.segment","id":"seg_0","start":0.2,"end":1.1,"text":"Hello there.","speaker":"A"},
			{"type":"transcript.text.segment","id":"seg_1","start":1.3,"end":2.0,"text":"Hi.","speaker":"B"}]}`)
	})
	p := newProvider(t, provider.Options{Name: "openai", BaseURL: url, Model: "gpt-4o-transcribe-diarize", APIKey: "k", Speakers: provider.SpeakersUnknown})
	tr, err := p.Transcribe(context.Background(), chunk(t))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k := range fields {
		if _, ok := props[k]; !ok {
			t.Errorf("form field %s is not in CreateTranscriptionRequest", k)
		}
	}
	if fields["response_format"] != "diarized_json" || fields["chunking_strategy"] != "auto" {
		t.Errorf("fields %v", fields)
	}
	if len(tr.Segments) != 2 || tr.Segments[0].Speaker != "A" || tr.Segments[1].Speaker != "B" || tr.Segments[1].Start != 1300*time.Millisecond {
		t.Errorf("segments %+v", tr.Segments)
	}
	// The diarizing model takes no prompt, and so no vocabulary.
	for _, h := range []provider.Hints{{Prompt: "x"}, {Vocabulary: []string{"Rubicon"}}} {
		if _, err := provider.New(provider.Options{Name: "openai", BaseURL: url, Model: "gpt-4o-transcribe-diarize", Hints: h}); err == nil {
			t.Errorf("hints %+v taken by the diarizing model", h)
		}
	}
}

// TestProvidersWithoutSpeakersRefuseThem: a provider that labels no
// speakers is not made with speakers asked for, and says which do.
func TestProvidersWithoutSpeakersRefuseThem(t *testing.T) {
	for _, name := range []string{"groq", "whispercpp", "localai"} {
		_, err := provider.New(provider.Options{Name: name, BaseURL: "http://127.0.0.1:9", Model: "whisper-1", Speakers: provider.SpeakersUnknown})
		if err == nil || !strings.Contains(err.Error(), "labels no speakers") || !strings.Contains(err.Error(), "assemblyai") {
			t.Errorf("%s: %v; want a refusal naming the providers that label speakers", name, err)
		}
	}
	// OpenAI labels them with one model only, and says which.
	_, err := provider.New(provider.Options{Name: "openai", BaseURL: "http://127.0.0.1:9", Model: "whisper-1", Speakers: 2})
	if err == nil || !strings.Contains(err.Error(), "openai/whisper-1 labels no speakers") || !strings.Contains(err.Error(), "gpt-4o-transcribe-diarize") {
		t.Errorf("openai/whisper-1: %v; want a refusal naming the model that labels speakers", err)
	}
}

func anyStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
