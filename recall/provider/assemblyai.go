package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// assemblyAI sends audio to AssemblyAI in three steps: upload the audio
// (free), create a transcript job from the upload (the paid request), then
// poll the job until it ends. The upload URL is recorded before the paid
// request and the job id as soon as it is known, so that an ambiguous
// request can be looked up.
type assemblyAI struct {
	baseURL string
	// model is the speech model, such as "universal-3-pro".
	model, apiKey string
	// pollEvery is the wait between polls; default 3 s.
	pollEvery time.Duration
	// speakers asks for speaker labels: see Options.Speakers.
	speakers int
	hints    Hints
}

// Evidence keys the provider records.
const (
	evAssemblyUpload = "assemblyai_upload_url"
	evAssemblyJob    = "assemblyai_transcript_id"
)

// assemblyRequest is the body of POST /v2/transcript: the upload and the
// speech models, a list in priority order (the single speech_model the API
// took before is refused).
type assemblyRequest struct {
	AudioURL     string   `json:"audio_url"`
	SpeechModels []string `json:"speech_models"`
	// SpeakerLabels and SpeakersExpected ask for speaker diarization.
	SpeakerLabels    bool `json:"speaker_labels,omitempty"`
	SpeakersExpected int  `json:"speakers_expected,omitempty"`
	// LanguageCode, Prompt and KeytermsPrompt carry the hints; without a
	// language, LanguageDetection asks for it to be detected, which
	// AssemblyAI does not do unless asked (it takes the audio for en_us).
	LanguageCode      string   `json:"language_code,omitempty"`
	LanguageDetection bool     `json:"language_detection,omitempty"`
	Prompt            string   `json:"prompt,omitempty"`
	KeytermsPrompt    []string `json:"keyterms_prompt,omitempty"`
}

type assemblyTranscript struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	Text          string  `json:"text"`
	Error         string  `json:"error"`
	AudioURL      string  `json:"audio_url"`
	AudioDuration float64 `json:"audio_duration"`
	// LanguageCode is the language asked for, or the one detected.
	LanguageCode string `json:"language_code"`
	Words        []struct {
		Text       string   `json:"text"`
		Start      int64    `json:"start"`
		End        int64    `json:"end"`
		Speaker    *string  `json:"speaker"`
		Confidence *float64 `json:"confidence"`
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
func (a *assemblyAI) transcribe(ctx context.Context, paid *http.Client, c Chunk) (recording.Transcript, error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return recording.Transcript{}, &LocalError{fmt.Errorf("read chunk %s: %w", c.Path, err)}
	}
	// 1. The upload costs nothing: any failure of it is safe to retry.
	req, err := a.request(ctx, http.MethodPost, "/v2/upload", audio, "application/octet-stream")
	if err != nil {
		return recording.Transcript{}, &LocalError{err}
	}
	data, _, err := call(paid, req, "assemblyai", "")
	if err != nil {
		return recording.Transcript{}, &LocalError{fmt.Errorf("assemblyai: upload: %w", err)}
	}
	var up struct {
		UploadURL string `json:"upload_url"`
	}
	if err := json.Unmarshal(data, &up); err != nil || up.UploadURL == "" {
		return recording.Transcript{}, &LocalError{fmt.Errorf("assemblyai: upload: no upload_url in the answer")}
	}
	if err := c.note(journal.Evidence{evAssemblyUpload: up.UploadURL}); err != nil {
		return recording.Transcript{}, &LocalError{fmt.Errorf("recording the upload URL: %w", err)}
	}

	// 2. The paid request: a transcript job for the upload.
	ask := assemblyRequest{AudioURL: up.UploadURL, SpeechModels: []string{a.model}, SpeakerLabels: a.speakers != 0}
	if a.speakers > 0 {
		ask.SpeakersExpected = a.speakers
	}
	if a.hints.Language != "" {
		ask.LanguageCode, _ = underscored(a.hints.Language)
	} else {
		ask.LanguageDetection = true
	}
	ask.Prompt, ask.KeytermsPrompt = a.hints.Prompt, a.hints.Vocabulary
	body, _ := json.Marshal(ask)
	req, err = a.request(ctx, http.MethodPost, "/v2/transcript", body, "application/json")
	if err != nil {
		return recording.Transcript{}, &LocalError{err}
	}
	data, _, err = call(paid, req, "assemblyai", "")
	if err != nil {
		return recording.Transcript{}, err
	}
	var job assemblyTranscript
	if err := json.Unmarshal(data, &job); err != nil || job.ID == "" {
		return recording.Transcript{}, fmt.Errorf("assemblyai: the transcript job was accepted without a readable id")
	}
	if err := c.note(journal.Evidence{evAssemblyJob: job.ID}); err != nil {
		return recording.Transcript{}, &AcceptedError{Provider: "assemblyai", ID: job.ID, Err: fmt.Errorf("recording the job: %w", err)}
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

func (a *assemblyAI) poll(ctx context.Context, hc *http.Client, id string) (recording.Transcript, error) {
	every := a.pollEvery
	if every <= 0 {
		every = 3 * time.Second
	}
	for {
		job, err := a.get(ctx, hc, id)
		if err != nil {
			return recording.Transcript{}, fmt.Errorf("assemblyai: polling job %s: %w", id, err)
		}
		switch job.Status {
		case "completed":
			return job.transcript(), nil
		case "error":
			return recording.Transcript{}, &JobError{Provider: "assemblyai", ID: id, Message: job.Error}
		}
		select {
		case <-ctx.Done():
			return recording.Transcript{}, fmt.Errorf("assemblyai: job %s still %s: %w", id, job.Status, ctx.Err())
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

// transcript turns a completed job into a Transcript, words (TranscriptWord:
// times in milliseconds) grouped into segments that end at a sentence or
// after about 10 s, each segment keeping its words.
func (j assemblyTranscript) transcript() recording.Transcript {
	t := recording.Transcript{Text: strings.TrimSpace(j.Text), Language: LanguageTag(j.LanguageCode), RequestID: j.ID, Duration: seconds(j.AudioDuration), Segments: []recording.Segment{}, Timing: recording.TimingWords}
	words := make([]recording.Word, len(j.Words))
	for i, w := range j.Words {
		words[i] = recording.Word{Text: w.Text, Start: time.Duration(w.Start) * time.Millisecond, End: time.Duration(w.End) * time.Millisecond, Confidence: w.Confidence}
		if w.Speaker != nil {
			words[i].Speaker = *w.Speaker
		}
	}
	t.Segments = append(t.Segments, sentences(words)...)
	if len(t.Segments) == 0 {
		t.Timing = recording.TimingChunk
		if t.Text != "" {
			t.Segments = append(t.Segments, recording.Segment{End: t.Duration, Text: t.Text})
		}
	}
	return t
}

// listPage is the page size of transcript list look-ups, the most the
// API gives.
const listPage = 200

// lookup asks about a request. With the job id recorded, it asks for the
// job. With only the upload URL, it reads the transcript list, newest
// first, page after page through prev_url (before_id), until a page holds
// only transcripts created before the request was committed as sending,
// or there is none older, for a job of that upload. With neither, the
// paid request never went out, since it needs the upload URL, which is
// recorded before it.
func (a *assemblyAI) lookup(ctx context.Context, reads *http.Client, key string, ev journal.Evidence) (Found, error) {
	id, _ := ev[evAssemblyJob].(string)
	upload, _ := ev[evAssemblyUpload].(string)
	if id == "" && upload == "" {
		return Found{}, nil
	}
	unproven := func(reason string) error {
		return &UnprovenError{Provider: "assemblyai", Reason: reason,
			Check: "the transcripts in AssemblyAI's dashboard created around the time 'recall-archive ambiguous' shows, for one of the audio " + upload}
	}
	if id == "" {
		start, ok := window(ev)
		if !ok {
			return Found{}, unproven("the time the request was sent is not recorded, so the transcript list cannot be read for it")
		}
		var err error
		if id, err = a.find(ctx, reads, upload, start, unproven); err != nil {
			return Found{}, err
		}
		if id == "" {
			return Found{}, nil // no job for the upload: the paid request never arrived
		}
	}
	job, err := a.get(ctx, reads, id)
	if err != nil {
		return Found{}, unproven(fmt.Sprintf("reading job %s: %v", id, err))
	}
	switch job.Status {
	case "completed":
		t := job.transcript()
		return Found{Charged: true, RequestID: id, Transcript: &t}, nil
	case "error":
		return Found{RequestID: id}, nil // a failed job is not charged
	case "queued", "processing":
		return Found{}, fmt.Errorf("assemblyai: job %s is still %s: reconcile again later", id, job.Status)
	}
	return Found{}, unproven(fmt.Sprintf("job %s has a status recall does not know: %q", id, job.Status))
}

// assemblyList is one page of GET /v2/transcript.
type assemblyList struct {
	PageDetails *struct {
		Limit       int     `json:"limit"`
		ResultCount int     `json:"result_count"`
		PrevURL     *string `json:"prev_url"`
	} `json:"page_details"`
	Transcripts *[]struct {
		ID       string `json:"id"`
		Created  string `json:"created"`
		AudioURL string `json:"audio_url"`
	} `json:"transcripts"`
}

// find returns the id of the job of upload in the transcript list, or ""
// once the list was read back to start without one.
func (a *assemblyAI) find(ctx context.Context, reads *http.Client, upload string, start time.Time, unproven func(string) error) (string, error) {
	query := url.Values{"limit": {strconv.Itoa(listPage)}}
	var deleted int
	for page := 0; ; page++ {
		if page == maxPages {
			return "", unproven(fmt.Sprintf("the transcript list holds more than %d pages since the request was sent", maxPages))
		}
		req, err := a.request(ctx, http.MethodGet, "/v2/transcript?"+query.Encode(), nil, "")
		if err != nil {
			return "", err
		}
		data, _, err := call(reads, req, "assemblyai", "")
		if err != nil {
			return "", unproven("reading the transcript list: " + err.Error())
		}
		var list assemblyList
		if err := json.Unmarshal(data, &list); err != nil || list.PageDetails == nil || list.Transcripts == nil {
			why := "no page_details or no transcripts"
			if err != nil {
				why = err.Error()
			}
			return "", unproven(fmt.Sprintf("page %d of the transcript list is in a shape recall does not know: %s", page, why))
		}
		older := 0
		for _, tr := range *list.Transcripts {
			if tr.AudioURL == upload {
				return tr.ID, nil
			}
			created, err := time.Parse("2006-01-02T15:04:05.999999999", tr.Created)
			if err != nil {
				return "", unproven(fmt.Sprintf("transcript %s has a creation time recall cannot read: %q", tr.ID, tr.Created))
			}
			if created.Before(start) {
				older++
			} else if !strings.HasPrefix(tr.AudioURL, "http") || strings.Contains(tr.AudioURL, "deleted_by_user") {
				deleted++
			}
		}
		if deleted > 0 {
			return "", unproven(fmt.Sprintf("%d transcripts created since the request was sent no longer say their audio (deleted), so one of them may be its job", deleted))
		}
		prev := list.PageDetails.PrevURL
		if older == len(*list.Transcripts) || prev == nil || *prev == "" {
			return "", nil // read back to before the request, or to the oldest
		}
		u, err := url.Parse(*prev)
		if err != nil || u.Query().Get("before_id") == "" {
			return "", unproven(fmt.Sprintf("page %d's prev_url does not say where the older transcripts start: %q", page, *prev))
		}
		// The previous page is asked of the same API, whatever host the
		// link names.
		query = u.Query()
	}
}
