package provider_test

// Contract tests: what recall sends is checked against the providers' own
// descriptions, and the stand-ins answer as those descriptions, their SDKs'
// fixtures and their servers' sources say (testdata/README.md names each).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// spec is a fragment of a provider's OpenAPI document in testdata.
type spec = map[string]any

func loadSpec(t *testing.T, file string) spec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var s spec
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// schema returns components.schemas.name.
func schemaOf(t *testing.T, s spec, name string) map[string]any {
	t.Helper()
	sc, ok := s["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("the spec has no schema %s", name)
	}
	return sc
}

// strings returns the []any at v as strings.
func stringsOf(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// serve starts h on loopback for the test.
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// checkForm checks every field of a transcription form against OpenAI's
// CreateTranscriptionRequest: known names, string values, enums.
func checkForm(t *testing.T, oai spec, form *multipart.Form) []string {
	req := schemaOf(t, oai, "CreateTranscriptionRequest")
	props := req["properties"].(map[string]any)
	formats := stringsOf(schemaOf(t, oai, "AudioResponseFormat")["enum"])
	var problems []string
	for name, values := range form.Value {
		field := strings.TrimSuffix(name, "[]") // an array field, as the SDKs send it
		prop, ok := props[field].(map[string]any)
		if !ok {
			problems = append(problems, "unknown field "+name)
			continue
		}
		for _, v := range values {
			switch field {
			case "response_format":
				if !slices.Contains(formats, v) {
					problems = append(problems, "response_format "+v+" not in "+strings.Join(formats, ", "))
				}
			case "timestamp_granularities":
				if !slices.Contains(stringsOf(prop["items"].(map[string]any)["enum"]), v) {
					problems = append(problems, "timestamp_granularities "+v)
				}
			case "model":
				var enum []string
				for _, alt := range prop["anyOf"].([]any) {
					enum = append(enum, stringsOf(alt.(map[string]any)["enum"])...)
				}
				if !slices.Contains(enum, v) {
					problems = append(problems, "model "+v+" is not one of the spec's")
				}
			}
		}
	}
	for _, name := range stringsOf(req["required"]) {
		if _, ok := form.Value[name]; !ok && form.File[name] == nil {
			problems = append(problems, "required field "+name+" missing")
		}
	}
	return problems
}

// oaiExample returns the example of an OpenAI response schema, made valid
// JSON (the document elides repeated segments with "...").
func oaiExample(t *testing.T, oai spec, name string) []byte {
	ex := schemaOf(t, oai, name)["x-oaiMeta"].(map[string]any)["example"].(string)
	var lines []string
	for _, l := range strings.Split(ex, "\n") {
		if strings.TrimSpace(l) != "..." {
			lines = append(lines, l)
		}
	}
	ex = strings.Join(lines, "\n")
	ex = regexp.MustCompile(`\},\s*\]`).ReplaceAllString(ex, "}]")
	if !json.Valid([]byte(ex)) {
		t.Fatalf("the example of %s is not JSON:\n%s", name, ex)
	}
	return []byte(ex)
}

// TestOpenAIFormsMatchTheSpec: for every OpenAI model recall prices, the
// form it sends holds only fields, formats and models the spec lists, and
// the gpt-4o models ask for json, the only format the spec gives them;
// their answer (the spec's example) is a transcript timed to its chunk,
// and whisper-1's (verbose) is timed by segment.
func TestOpenAIFormsMatchTheSpec(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	desc := schemaOf(t, oai, "AudioResponseFormat")["description"].(string)
	reg, _ := provider.Lookup("openai")
	for _, model := range reg.Models() {
		t.Run(model, func(t *testing.T) {
			// "For `gpt-4o-transcribe` and `gpt-4o-mini-transcribe`, the
			// only supported format is `json`. For
			// `gpt-4o-transcribe-diarize`, the supported formats are ...
			// `diarized_json`, with `diarized_json` required to receive
			// speaker annotations."
			var jsonOnly, diarized bool
			for _, sentence := range strings.Split(desc, ". ") {
				if strings.Contains(sentence, "`"+model+"`") {
					jsonOnly = jsonOnly || strings.Contains(sentence, "only supported format is `json`")
					diarized = diarized || strings.Contains(sentence, "`diarized_json`")
				}
			}
			var problems []string
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
					http.NotFound(w, r)
					return
				}
				if err := r.ParseMultipartForm(1 << 20); err != nil {
					problems = append(problems, err.Error())
				} else {
					problems = append(problems, checkForm(t, oai, r.MultipartForm)...)
				}
				format := r.FormValue("response_format")
				if diarized {
					if format != "diarized_json" {
						problems = append(problems, "the diarizing model asked for "+format+", not diarized_json")
					}
					w.Write(oaiExample(t, oai, "CreateTranscriptionResponseDiarizedJson"))
					return
				}
				if jsonOnly && format != "json" {
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"error":{"message":"response_format '%s' is not compatible with model '%s'. Use 'json' or 'text' instead.","type":"invalid_request_error","param":"response_format","code":"unsupported_value"}}`, format, model)
					return
				}
				if format == "verbose_json" {
					w.Write(oaiExample(t, oai, "CreateTranscriptionResponseVerboseJson"))
					return
				}
				w.Write(oaiExample(t, oai, "CreateTranscriptionResponseJson"))
			})
			p := newProvider(t, provider.Options{Name: "openai", BaseURL: url + "/v1", Model: model, APIKey: "k"})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			if err != nil {
				t.Fatalf("transcribe: %v", err)
			}
			if len(problems) > 0 {
				t.Fatalf("the form does not match CreateTranscriptionRequest: %s", strings.Join(problems, "; "))
			}
			want := recording.TimingSegments
			if jsonOnly {
				want = recording.TimingChunk
			}
			if tr.Timing != want || len(tr.Segments) == 0 || tr.Text == "" {
				t.Fatalf("transcript %+v: want timing %s", tr, want)
			}
		})
	}
}

// TestErrorShapes: every error shape the providers document is read for
// its message, and each answer gets the outcome its status proves; a
// refused key is told apart.
func TestErrorShapes(t *testing.T) {
	oai := loadSpec(t, "openai/openapi-audio.yaml")
	// OpenAI's Error requires exactly these fields.
	if got := stringsOf(schemaOf(t, oai, "Error")["required"]); !slices.Equal(got, []string{"type", "message", "param", "code"}) {
		t.Fatalf("OpenAI's Error requires %v", got)
	}
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	if got := stringsOf(schemaOf(t, aai, "Error")["required"]); !slices.Equal(got, []string{"error"}) {
		t.Fatalf("AssemblyAI's Error requires %v", got)
	}
	for _, tt := range []struct {
		provider, body string
		status         int
		message        string
		want           journal.State
	}{
		{"openai", `{"error":{"message":"Invalid file format.","type":"invalid_request_error","param":"file","code":null}}`, 400, "Invalid file format.", journal.NotApplied},
		{"openai", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, 401, "Incorrect API key provided", journal.NotApplied},
		{"openai", `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, 500, "The server had an error", journal.Ambiguous},
		{"groq", `{"error":{"message":"Rate limit reached","type":"tokens","code":"rate_limit_exceeded"}}`, 429, "Rate limit reached", journal.NotApplied},
		// Deepgram: ErrorResponseLegacyError, ErrorResponseModernError, ErrorResponseTextError.
		{"deepgram", `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"r-1"}`, 401, "Invalid credentials.", journal.NotApplied},
		{"deepgram", `{"category":"INVALID_QUERY_PARAMETER","message":"Failed to process audio","details":"unknown model","request_id":"r-2"}`, 400, "Failed to process audio: unknown model", journal.NotApplied},
		{"deepgram", `Bad Gateway`, 502, "Bad Gateway", journal.Ambiguous},
		// whisper.cpp: {"error": "..."}.
		{"whispercpp", `{"error":"failed to read audio data"}`, 400, "failed to read audio data", journal.NotApplied},
		{"whispercpp", `{"error":"failed to process audio"}`, 500, "failed to process audio", journal.Ambiguous},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.provider, tt.status), func(t *testing.T) {
			path := "/v1/audio/transcriptions"
			switch tt.provider {
			case "deepgram":
				path = "/v1/listen"
			case "whispercpp":
				path = "/inference"
			}
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.URL.Path != path {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			p := newProvider(t, provider.Options{Name: tt.provider, BaseURL: url, Model: "m", APIKey: "k"})
			_, err := p.Transcribe(context.Background(), chunk(t))
			var he *provider.HTTPError
			if !errors.As(err, &he) || he.Message != tt.message {
				t.Fatalf("error %v: want the message %q", err, tt.message)
			}
			if got := provider.Report("w", err).To; got != tt.want {
				t.Fatalf("outcome %s, want %s", got, tt.want)
			}
			if _, refused := provider.KeyRefused(err); refused != (tt.status == 401 || tt.status == 403) {
				t.Fatalf("KeyRefused(%v) = %v", err, refused)
			}
		})
	}
}

// TestAssemblyAIRequestMatchesTheSpec: the transcript request holds only
// the fields TranscriptParams allows, speech_models (required) lists
// models of the spec's SpeechModel enum, and the registered models are
// all in it; an upload refused as AssemblyAI documents it (Error, 400)
// stops the request before it is paid, and a job that ends in
// status "error" is not applied.
func TestAssemblyAIRequestMatchesTheSpec(t *testing.T) {
	aai := loadSpec(t, "assemblyai/openapi-transcripts.yaml")
	enum := stringsOf(schemaOf(t, aai, "SpeechModel")["enum"])
	optional := schemaOf(t, aai, "TranscriptOptionalParams")
	if !slices.Contains(stringsOf(optional["required"]), "speech_models") {
		t.Fatal("the spec no longer requires speech_models")
	}
	allowed := []string{"audio_url"}
	for name := range optional["properties"].(map[string]any) {
		allowed = append(allowed, name)
	}
	reg, _ := provider.Lookup("assemblyai")
	for _, m := range append(reg.Models(), reg.DefaultModel) {
		if !slices.Contains(enum, m) {
			t.Errorf("registered model %s is not in the spec's SpeechModel enum %v", m, enum)
		}
	}
	for _, status := range []string{"completed", "error"} {
		t.Run(status, func(t *testing.T) {
			var mu sync.Mutex
			var problems []string
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/v2/upload":
					io.Copy(io.Discard, r.Body)
					io.WriteString(w, `{"upload_url":"https://cdn.assemblyai.com/upload/u-1"}`)
				case r.Method == http.MethodPost && r.URL.Path == "/v2/transcript":
					var body map[string]any
					json.NewDecoder(r.Body).Decode(&body)
					for k := range body {
						if !slices.Contains(allowed, k) {
							problems = append(problems, "field "+k+" is not in TranscriptParams")
						}
					}
					models, ok := body["speech_models"].([]any)
					if !ok || len(models) == 0 {
						w.WriteHeader(http.StatusBadRequest)
						io.WriteString(w, `{"error":"speech_models is required","status":"error"}`)
						return
					}
					for _, m := range stringsOf(models) {
						if !slices.Contains(enum, m) {
							problems = append(problems, "speech model "+m+" is not in the enum")
						}
					}
					io.WriteString(w, `{"id":"9ea68fd3-f953-42c1-9742-976c447fb463","status":"queued"}`)
				case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/transcript/"):
					if status == "error" {
						io.WriteString(w, `{"id":"9ea68fd3-f953-42c1-9742-976c447fb463","status":"error","error":"Download error, unable to download","text":null}`)
						return
					}
					io.WriteString(w, `{"id":"9ea68fd3-f953-42c1-9742-976c447fb463","status":"completed","text":"Hello there.","audio_duration":2,
						"words":[{"text":"Hello","start":100,"end":400,"confidence":0.9},{"text":"there.","start":400,"end":800,"confidence":0.9}]}`)
				default:
					http.NotFound(w, r)
				}
			})
			p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: reg.DefaultModel, APIKey: "k", PollEvery: time.Millisecond})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			mu.Lock()
			defer mu.Unlock()
			if len(problems) > 0 {
				t.Fatalf("the request does not match the spec: %s", strings.Join(problems, "; "))
			}
			if status == "error" {
				if got := provider.Report("w", err).To; got != journal.NotApplied {
					t.Fatalf("a job in status error: %v, %s; want not applied", err, got)
				}
				return
			}
			if err != nil || tr.Timing != recording.TimingWords || len(tr.Segments) != 1 || tr.Segments[0].End != 800*time.Millisecond {
				t.Fatalf("transcript %+v, %v", tr, err)
			}
		})
	}
}

// TestOpenAICompatibleServers: each server by name, against a stand-in
// that serves what its source says: whisper.cpp only POST /inference,
// with segment times in seconds; LocalAI its TranscriptionResult, with
// times as Go durations (nanoseconds); Groq under /openai/v1, given as the
// base URL its documentation shows.
func TestOpenAICompatibleServers(t *testing.T) {
	for _, tt := range []struct {
		name, path, base, answer string
	}{
		{"whispercpp", "/inference", "", `{"task":"transcribe","language":"english","duration":2.5,"text":" hello there\n",
			"segments":[{"id":0,"text":" hello there","start":1.5,"end":2.25,"words":[],"tokens":[],"temperature":0,"avg_logprob":0,"no_speech_prob":0.01}]}`},
		{"localai", "/v1/audio/transcriptions", "", `{"segments":[{"id":0,"start":1500000000,"end":2250000000,"text":" hello there","tokens":[1,2]}],"text":"hello there","output":""}`},
		{"groq", "/openai/v1/audio/transcriptions", "/openai/v1", `{"task":"transcribe","language":"English","duration":2.5,"text":"hello there",
			"segments":[{"id":0,"seek":0,"start":1.5,"end":2.25,"text":" hello there","tokens":[1],"temperature":0,"avg_logprob":-0.1,"compression_ratio":1,"no_speech_prob":0.01}]}`},
		{"speaches", "/v1/audio/transcriptions", "/v1", `{"task":"transcribe","language":"en","duration":2.5,"text":"hello there",
			"segments":[{"id":0,"seek":0,"start":1.5,"end":2.25,"text":" hello there","tokens":[1],"temperature":0,"avg_logprob":-0.1,"compression_ratio":1,"no_speech_prob":0.01}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != tt.path {
					w.WriteHeader(http.StatusNotFound)
					io.WriteString(w, "File Not Found ("+r.URL.Path+")") // whisper.cpp's error handler
					return
				}
				if _, _, err := r.FormFile("file"); err != nil {
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, `{"error":"no 'file' field in the request"}`)
					return
				}
				io.WriteString(w, tt.answer)
			})
			reg, _ := provider.Lookup(tt.name)
			p := newProvider(t, provider.Options{Name: tt.name, BaseURL: url + tt.base, Model: reg.DefaultModel})
			tr, err := p.Transcribe(context.Background(), chunk(t))
			if err != nil {
				t.Fatalf("transcribe: %v", err)
			}
			if len(tr.Segments) != 1 || tr.Segments[0].Start != 1500*time.Millisecond || tr.Segments[0].End != 2250*time.Millisecond || tr.Segments[0].Text != "hello there" {
				t.Fatalf("segments %+v: want hello there from 1.5 s to 2.25 s", tr.Segments)
			}
		})
	}
}

// TestDeepgramRequestMatchesTheSDK: every query parameter recall sends to
// /v1/listen is one the SDK's wiremock mapping names, with its values'
// form; the SDK's recorded answer of nova-2 (words, no utterances) becomes
// a transcript timed by its words.
func TestDeepgramRequestMatchesTheSDK(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "deepgram", "wiremock-mappings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mappings struct {
		Mappings []struct {
			Request struct {
				URLPathTemplate string                    `json:"urlPathTemplate"`
				QueryParameters map[string]map[string]any `json:"queryParameters"`
			} `json:"request"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(data, &mappings); err != nil {
		t.Fatal(err)
	}
	var params map[string]map[string]any
	for _, m := range mappings.Mappings {
		if m.Request.URLPathTemplate == "/v1/listen" {
			params = m.Request.QueryParameters
		}
	}
	if params == nil {
		t.Fatal("no mapping of /v1/listen")
	}
	answer, err := os.ReadFile(filepath.Join("testdata", "deepgram", "listen-response-v3.9.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Authorization") != "Token k" {
			problems = append(problems, "authorization "+r.Header.Get("Authorization"))
		}
		for name, values := range r.URL.Query() {
			want, ok := params[name]
			switch {
			case !ok:
				problems = append(problems, "unknown parameter "+name)
			case want["equalTo"] == "true" && values[0] != "true":
				problems = append(problems, name+" is a boolean, sent "+values[0])
			}
		}
		w.Write(answer)
	})
	p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-2", APIKey: "k"})
	tr, err := p.Transcribe(context.Background(), chunk(t))
	if len(problems) > 0 {
		t.Fatalf("the request does not match the SDK's: %s", strings.Join(problems, "; "))
	}
	if err != nil || tr.Timing != recording.TimingWords || len(tr.Segments) < 2 || tr.Segments[0].Start != 5520*time.Millisecond || tr.RequestID != "e171e35d-e7d5-4bc3-9467-16186ea7f37b" {
		t.Fatalf("transcript of the SDK's answer: %+v, %v", tr, err)
	}
}
