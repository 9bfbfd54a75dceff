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
)

// openAI is any OpenAI-compatible POST {baseURL}/v1/audio/transcriptions:
// OpenAI, Groq, a whisper.cpp server, speaches, LocalAI, or the sandbox.
type openAI struct {
	baseURL, model, apiKey string
	// tagHeader, if set, names a header that carries the chunk's journal
	// key, for providers that can be asked about it later.
	tagHeader string
}

// limits: OpenAI-compatible APIs take up to 25 MB, and the gpt-4o
// transcription models at most 1,500 s of audio (a margin is kept under
// it).
func (o *openAI) limits(model string) Limits {
	l := Limits{MaxBytes: 25 << 20}
	if strings.HasPrefix(model, "gpt-4o") {
		l.MaxDuration = 1400 * time.Second
	}
	return l
}

type verboseJSON struct {
	Text     string  `json:"text"`
	Language string  `json:"language"`
	Duration float64 `json:"duration"`
	Segments []struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
		Text  string  `json:"text"`
	} `json:"segments"`
}

// transcribe sends one multipart POST.
func (o *openAI) transcribe(ctx context.Context, paid *http.Client, c Chunk) (Transcript, error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return Transcript{}, &LocalError{fmt.Errorf("read chunk %s: %w", c.Path, err)}
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", filepath.Base(c.Path))
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	fw.Write(audio)
	mw.WriteField("model", o.model)
	mw.WriteField("response_format", "verbose_json")
	mw.WriteField("timestamp_granularities[]", "segment")
	if err := mw.Close(); err != nil {
		return Transcript{}, &LocalError{err}
	}
	// A bytes.Reader body gets GetBody, so that an attempt proven not sent
	// can go again.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.baseURL, "/")+"/v1/audio/transcriptions", bytes.NewReader(body.Bytes()))
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	if o.tagHeader != "" {
		req.Header.Set(o.tagHeader, c.Key)
	}
	data, reqID, err := call(paid, req, "openai", "X-Request-Id")
	if err != nil {
		return Transcript{}, err
	}
	t, err := ParseVerboseJSON(data)
	if err != nil {
		return Transcript{}, fmt.Errorf("unreadable answer (request %s): %w", reqID, err)
	}
	t.RequestID = reqID
	return t, nil
}

// ParseVerboseJSON reads an OpenAI-style verbose_json transcription.
func ParseVerboseJSON(data []byte) (Transcript, error) {
	var v verboseJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return Transcript{}, err
	}
	t := Transcript{Text: strings.TrimSpace(v.Text), Language: v.Language, Duration: seconds(v.Duration), Segments: make([]Segment, 0, len(v.Segments))}
	for _, s := range v.Segments {
		t.Segments = append(t.Segments, Segment{Start: seconds(s.Start), End: seconds(s.End), Text: strings.TrimSpace(s.Text)})
	}
	if len(t.Segments) == 0 && t.Text != "" {
		t.Segments = append(t.Segments, Segment{End: t.Duration, Text: t.Text})
	}
	return t, nil
}
