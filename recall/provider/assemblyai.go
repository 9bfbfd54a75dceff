package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// assemblyAI sends audio to AssemblyAI in three steps: upload the audio
// (free), create a transcript job from the upload (the paid request), then
// poll the job until it ends. The upload URL is recorded before the paid
// request and the job id as soon as it is known, so that an ambiguous
// request can be looked up.
type assemblyAI struct {
	baseURL string
	// model is the speech model, such as "best".
	model, apiKey string
	// pollEvery is the wait between polls; default 3 s.
	pollEvery time.Duration
}

// limits: uploads of up to 2.2 GB.
func (a *assemblyAI) limits(string) Limits { return Limits{MaxBytes: 2200 << 20} }

// Evidence keys the provider records.
const (
	evAssemblyUpload = "assemblyai_upload_url"
	evAssemblyJob    = "assemblyai_transcript_id"
)

type assemblyTranscript struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	Text          string  `json:"text"`
	Error         string  `json:"error"`
	AudioURL      string  `json:"audio_url"`
	AudioDuration float64 `json:"audio_duration"`
	Words         []struct {
		Text  string `json:"text"`
		Start int64  `json:"start"`
		End   int64  `json:"end"`
	} `json:"words"`
}

func (a *assemblyAI) request(ctx context.Context, method, path string, body []byte, contentType string) (*http.Request, error) {
	var r *bytes.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	var req *http.Request
	var err error
	if r != nil {
		req, err = http.NewRequestWithContext(ctx, method, strings.TrimRight(a.baseURL, "/")+path, r)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, strings.TrimRight(a.baseURL, "/")+path, nil)
	}
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if a.apiKey != "" {
		req.Header.Set("Authorization", a.apiKey)
	}
	return req, nil
}

// transcribe uploads the chunk, creates its job and polls it, all through
// the paid client.
func (a *assemblyAI) transcribe(ctx context.Context, paid *http.Client, c Chunk) (Transcript, error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return Transcript{}, &LocalError{fmt.Errorf("read chunk %s: %w", c.Path, err)}
	}
	// 1. The upload costs nothing: any failure of it is safe to retry.
	req, err := a.request(ctx, http.MethodPost, "/v2/upload", audio, "application/octet-stream")
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	data, _, err := call(paid, req, "assemblyai", "")
	if err != nil {
		return Transcript{}, &LocalError{fmt.Errorf("assemblyai: upload: %w", err)}
	}
	var up struct {
		UploadURL string `json:"upload_url"`
	}
	if err := json.Unmarshal(data, &up); err != nil || up.UploadURL == "" {
		return Transcript{}, &LocalError{fmt.Errorf("assemblyai: upload: no upload_url in the answer")}
	}
	if err := c.note(journal.Evidence{evAssemblyUpload: up.UploadURL}); err != nil {
		return Transcript{}, &LocalError{fmt.Errorf("recording the upload URL: %w", err)}
	}

	// 2. The paid request: a transcript job for the upload.
	body, _ := json.Marshal(map[string]string{"audio_url": up.UploadURL, "speech_model": a.model})
	req, err = a.request(ctx, http.MethodPost, "/v2/transcript", body, "application/json")
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	data, _, err = call(paid, req, "assemblyai", "")
	if err != nil {
		return Transcript{}, err
	}
	var job assemblyTranscript
	if err := json.Unmarshal(data, &job); err != nil || job.ID == "" {
		return Transcript{}, fmt.Errorf("assemblyai: the transcript job was accepted without a readable id")
	}
	if err := c.note(journal.Evidence{evAssemblyJob: job.ID}); err != nil {
		return Transcript{}, &AcceptedError{Provider: "assemblyai", ID: job.ID, Err: fmt.Errorf("recording the job: %w", err)}
	}

	// 3. Poll. Any failure from here leaves a job that exists: ambiguous,
	// and the look-up finds it by its id.
	t, err := a.poll(ctx, paid, job.ID)
	var je *JobError
	if err != nil && !errors.As(err, &je) {
		err = &AcceptedError{Provider: "assemblyai", ID: job.ID, Err: err}
	}
	return t, err
}

func (a *assemblyAI) poll(ctx context.Context, hc *http.Client, id string) (Transcript, error) {
	every := a.pollEvery
	if every <= 0 {
		every = 3 * time.Second
	}
	for {
		job, err := a.get(ctx, hc, id)
		if err != nil {
			return Transcript{}, fmt.Errorf("assemblyai: polling job %s: %w", id, err)
		}
		switch job.Status {
		case "completed":
			return job.transcript(), nil
		case "error":
			return Transcript{}, &JobError{Provider: "assemblyai", ID: id, Message: job.Error}
		}
		select {
		case <-ctx.Done():
			return Transcript{}, fmt.Errorf("assemblyai: job %s still %s: %w", id, job.Status, ctx.Err())
		case <-time.After(every):
		}
	}
}

func (a *assemblyAI) get(ctx context.Context, hc *http.Client, id string) (assemblyTranscript, error) {
	req, err := a.request(ctx, http.MethodGet, "/v2/transcript/"+id, nil, "")
	if err != nil {
		return assemblyTranscript{}, err
	}
	data, _, err := call(hc, req, "assemblyai", "")
	if err != nil {
		return assemblyTranscript{}, err
	}
	var job assemblyTranscript
	if err := json.Unmarshal(data, &job); err != nil {
		return job, fmt.Errorf("unreadable job: %w", err)
	}
	return job, nil
}

// transcript turns a completed job into a Transcript, words grouped into
// segments that end at a sentence or after about 10 s.
func (j assemblyTranscript) transcript() Transcript {
	t := Transcript{Text: strings.TrimSpace(j.Text), RequestID: j.ID, Duration: seconds(j.AudioDuration), Segments: []Segment{}}
	var words []string
	var start int64 = -1
	var last int64
	flush := func() {
		if len(words) > 0 {
			t.Segments = append(t.Segments, Segment{Start: time.Duration(start) * time.Millisecond, End: time.Duration(last) * time.Millisecond, Text: strings.Join(words, " ")})
		}
		words, start = nil, -1
	}
	for _, w := range j.Words {
		if start < 0 {
			start = w.Start
		}
		words = append(words, w.Text)
		last = w.End
		if strings.HasSuffix(w.Text, ".") || strings.HasSuffix(w.Text, "?") || strings.HasSuffix(w.Text, "!") || w.End-start >= 10_000 {
			flush()
		}
	}
	flush()
	if len(t.Segments) == 0 && t.Text != "" {
		t.Segments = append(t.Segments, Segment{End: t.Duration, Text: t.Text})
	}
	return t
}

// lookup asks about a request. With the job id recorded, it asks for the job;
// with only the upload URL, it searches the transcript list for a job of
// that upload; with neither, the paid request never went out, since it
// needs the upload URL, which is recorded before it.
func (a *assemblyAI) lookup(ctx context.Context, reads *http.Client, key string, ev journal.Evidence) (Found, error) {
	id, _ := ev[evAssemblyJob].(string)
	upload, _ := ev[evAssemblyUpload].(string)
	if id == "" && upload == "" {
		return Found{}, nil
	}
	if id == "" {
		req, err := a.request(ctx, http.MethodGet, "/v2/transcript?limit=200", nil, "")
		if err != nil {
			return Found{}, err
		}
		data, _, err := call(reads, req, "assemblyai", "")
		if err != nil {
			return Found{}, err
		}
		var list struct {
			Transcripts []assemblyTranscript `json:"transcripts"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return Found{}, fmt.Errorf("assemblyai: unreadable transcript list: %w", err)
		}
		for _, tr := range list.Transcripts {
			if tr.AudioURL == upload {
				id = tr.ID
			}
		}
		if id == "" {
			return Found{}, nil // no job for the upload: the paid request never arrived
		}
	}
	job, err := a.get(ctx, reads, id)
	if err != nil {
		return Found{}, err
	}
	switch job.Status {
	case "completed":
		t := job.transcript()
		return Found{Charged: true, RequestID: id, Transcript: &t}, nil
	case "error":
		return Found{}, nil
	}
	return Found{}, fmt.Errorf("assemblyai: job %s is still %s: reconcile again later", id, job.Status)
}
