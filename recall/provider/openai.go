package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
)

// openAIDialect is how one OpenAI-compatible server differs from OpenAI's
// own API.
type openAIDialect struct {
	// path is the transcription endpoint under the base URL, such as
	// /v1/audio/transcriptions; a base URL that already ends in /v1 does
	// not get a second one.
	path string
	// seconds: segment times are seconds; otherwise nanoseconds, as Go's
	// time.Duration marshals them (LocalAI).
	seconds bool
	// textOnly reports the models that take only response_format json:
	// their answer has no timing below the chunk.
	textOnly func(model string) bool
	// words: verbose_json is asked for word times too
	// (timestamp_granularities[] word), which OpenAI gives at no cost
	// beyond some latency.
	words bool
}

// openAI is any OpenAI-compatible POST of a multipart form: OpenAI, Groq,
// a whisper.cpp server, LocalAI, speaches, or the sandbox.
type openAI struct {
	dialect                openAIDialect
	name                   string
	baseURL, model, apiKey string
	// tagHeader, if set, names a header that carries the chunk's journal
	// key, for providers that can be asked about it later.
	tagHeader string
	hints     Hints
	// diarize asks for diarized_json whatever the model: the sandbox's
	// placeholder speakers.
	diarize bool
}

// openAICompatible returns the api constructor of an OpenAI-compatible
// provider.
func openAICompatible(name string, d openAIDialect) func(Options) api {
	return func(o Options) api {
		return &openAI{dialect: d, name: name, baseURL: o.BaseURL, model: o.Model, apiKey: o.APIKey, hints: o.Hints}
	}
}

// diarizes reports OpenAI's model that labels speakers, answering in
// diarized_json.
func diarizes(model string) bool { return strings.HasPrefix(model, "gpt-4o-transcribe-diarize") }

// gpt4oText reports OpenAI's models that answer only in json: the gpt-4o
// transcription models (and gpt-transcribe), which refuse verbose_json.
func gpt4oText(model string) bool {
	return strings.HasPrefix(model, "gpt-4o") || strings.HasPrefix(model, "gpt-transcribe")
}

// openAILimits: OpenAI takes up to 25 MB, and the gpt-4o transcription
// models at most 1,500 s of audio (a margin is kept under it).
func openAILimits(model string) Limits {
	l := Limits{MaxBytes: openAIBytes}
	if gpt4oText(model) {
		l.MaxDuration = 1400 * time.Second
	}
	return l
}

// endpoint joins a base URL and an API path, once: a base URL given with
// /v1, as Groq and the OpenAI SDKs document theirs, is not given another.
func endpoint(base, path string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasPrefix(path, "/v1/") && strings.HasSuffix(base, "/v1") {
		path = strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// form returns the multipart form of one chunk: the file, the model and
// the response format the model accepts.
func (o *openAI) form(c Chunk) (body []byte, contentType string, err error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, "", fmt.Errorf("read chunk %s: %w", c.Path, err)
	}
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("file", filepath.Base(c.Path))
	if err != nil {
		return nil, "", err
	}
	fw.Write(audio)
	mw.WriteField("model", o.model)
	if o.hints.Language != "" {
		mw.WriteField("language", o.hints.Language)
	}
	if p := joinedPrompt(o.hints); p != "" {
		mw.WriteField("prompt", p)
	}
	switch {
	case o.diarize || o.name == "openai" && diarizes(o.model):
		// Speaker segments come only in diarized_json; the audio is cut
		// by the server's voice detection, which a chunk over 30 s needs.
		mw.WriteField("response_format", "diarized_json")
		mw.WriteField("chunking_strategy", "auto")
	case o.dialect.textOnly != nil && o.dialect.textOnly(o.model):
		mw.WriteField("response_format", "json")
	default:
		mw.WriteField("response_format", "verbose_json")
		mw.WriteField("timestamp_granularities[]", "segment")
		if o.dialect.words {
			mw.WriteField("timestamp_granularities[]", "word")
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

// transcribe sends one multipart POST.
func (o *openAI) transcribe(ctx context.Context, paid *http.Client, c Chunk) (recording.Transcript, error) {
	body, contentType, err := o.form(c)
	if err != nil {
		return recording.Transcript{}, &LocalError{err}
	}
	// A bytes.Reader body gets GetBody, so that an attempt proven not sent
	// can go again.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(o.baseURL, o.dialect.path), bytes.NewReader(body))
	if err != nil {
		return recording.Transcript{}, &LocalError{err}
	}
	req.Header.Set("Content-Type", contentType)
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	if o.tagHeader != "" {
		req.Header.Set(o.tagHeader, c.Key)
	}
	data, reqID, err := call(paid, req, o.name, "X-Request-Id")
	if err != nil {
		return recording.Transcript{}, err
	}
	t, err := o.parse(data)
	if err != nil {
		return recording.Transcript{}, fmt.Errorf("%s: unreadable answer (request %s): %w", o.name, reqID, err)
	}
	t.RequestID = reqID
	return t, nil
}

// parse reads the answer in the dialect's time unit.
func (o *openAI) parse(data []byte) (recording.Transcript, error) {
	unit := time.Second
	if !o.dialect.seconds {
		unit = time.Nanosecond
	}
	return parseOpenAI(data, unit)
}

// ParseVerboseJSON reads an OpenAI-style transcription: verbose_json, with
// segments timed in seconds (and words, if it was asked for them, each
// kept in its segment), or json, with the text alone (one segment without
// timing, Timing "chunk").
func ParseVerboseJSON(data []byte) (recording.Transcript, error) {
	return parseOpenAI(data, time.Second)
}

// parseOpenAI reads an OpenAI-style answer whose times are in unit.
func parseOpenAI(data []byte, unit time.Duration) (recording.Transcript, error) {
	var v struct {
		Text     *string `json:"text"`
		Language string  `json:"language"`
		// Languages are gpt-transcribe's, detected: TranscriptionLanguage.
		Languages []struct {
			Code string `json:"code"`
		} `json:"languages"`
		Duration float64 `json:"duration"`
		Segments []struct {
			Start   *float64 `json:"start"`
			End     *float64 `json:"end"`
			Text    string   `json:"text"`
			Speaker string   `json:"speaker"` // diarized_json's
		} `json:"segments"`
		// Words are TranscriptionWord: the word without punctuation.
		Words []struct {
			Word  string  `json:"word"`
			Start float64 `json:"start"`
			End   float64 `json:"end"`
		} `json:"words"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return recording.Transcript{}, err
	}
	if v.Text == nil {
		return recording.Transcript{}, fmt.Errorf("no text in the answer")
	}
	at := func(f float64) time.Duration { return in(f, unit) }
	if v.Language == "" && len(v.Languages) > 0 {
		v.Language = v.Languages[0].Code
	}
	t := recording.Transcript{Text: strings.TrimSpace(*v.Text), Language: LanguageTag(v.Language), Duration: at(v.Duration), Segments: make([]recording.Segment, 0, len(v.Segments)), Timing: recording.TimingSegments}
	if unit != time.Second {
		t.Duration = seconds(v.Duration) // LocalAI sends no duration; any other is seconds
	}
	for _, s := range v.Segments {
		if s.Start == nil || s.End == nil {
			t.Timing = recording.TimingChunk // whisper.cpp without timestamps
			continue
		}
		t.Segments = append(t.Segments, recording.Segment{Start: at(*s.Start), End: at(*s.End), Text: strings.TrimSpace(s.Text), Speaker: s.Speaker})
	}
	words := make([]recording.Word, 0, len(v.Words))
	for _, w := range v.Words {
		words = append(words, recording.Word{Start: at(w.Start), End: at(w.End), Text: strings.TrimSpace(w.Word)})
	}
	withWords(t.Segments, words)
	if len(t.Segments) == 0 {
		t.Timing = recording.TimingChunk
		if t.Text != "" {
			t.Segments = append(t.Segments, recording.Segment{End: t.Duration, Text: t.Text})
		}
	}
	return t, nil
}
