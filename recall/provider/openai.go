package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/retry"
)

// OpenAI is any OpenAI-compatible POST {BaseURL}/v1/audio/transcriptions:
// OpenAI, Groq, a whisper.cpp server, speaches, LocalAI, or the sandbox.
type OpenAI struct {
	// BaseURL is the API's root, such as https://api.openai.com.
	BaseURL string
	// ModelName is the model, such as whisper-1.
	ModelName string
	// APIKey is sent as a bearer token; empty sends none. It comes from the
	// environment and is never logged.
	APIKey string
	// Client sends the request; it should be rubicon's transport.
	Client *http.Client
	// TagHeader, if set, names a header that carries the chunk's journal
	// key, for providers that can be asked about it later.
	TagHeader string
}

// Name implements Provider.
func (o *OpenAI) Name() string { return "openai" }

// Model implements Provider.
func (o *OpenAI) Model() string { return o.ModelName }

// Limits implements Provider: OpenAI-compatible APIs take up to 25 MB, and
// the gpt-4o transcription models at most 1,500 s of audio (a margin is
// kept under it).
func (o *OpenAI) Limits() Limits {
	l := Limits{MaxBytes: 25 << 20}
	if strings.HasPrefix(o.ModelName, "gpt-4o") {
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

// Transcribe implements Provider with one multipart POST.
func (o *OpenAI) Transcribe(ctx context.Context, c Chunk) (Transcript, error) {
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
	mw.WriteField("model", o.ModelName)
	mw.WriteField("response_format", "verbose_json")
	mw.WriteField("timestamp_granularities[]", "segment")
	if err := mw.Close(); err != nil {
		return Transcript{}, &LocalError{err}
	}
	// A bytes.Reader body gets GetBody, so that an attempt proven not sent
	// can go again.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.BaseURL, "/")+"/v1/audio/transcriptions", bytes.NewReader(body.Bytes()))
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	if o.TagHeader != "" {
		req.Header.Set(o.TagHeader, c.Key)
	}
	data, reqID, err := call(o.Client, req, o.Name(), "X-Request-Id")
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

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// call sends req and returns the body of a successful answer and the
// provider's request id (from the idHeader), or an *HTTPError for another
// status. A body that breaks off after a success status is an error of its
// own: the request was processed, so the outcome is not a refusal.
func call(client *http.Client, req *http.Request, name, idHeader string) ([]byte, string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	reqID := resp.Header.Get(idHeader)
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, reqID, fmt.Errorf("%s: reading the answer (request %s): %w", name, reqID, err)
	}
	if resp.StatusCode/100 != 2 {
		he := &HTTPError{Provider: name, Method: req.Method, Status: resp.StatusCode, RequestID: reqID, Message: errorMessage(data)}
		if d, ok := retry.ParseRetryAfter(resp.Header, time.Now()); ok {
			he.RetryAfter = d
		}
		return nil, reqID, he
	}
	return data, reqID, nil
}

// errorMessage extracts {"error":{"message":...}}, or a short excerpt.
func errorMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
