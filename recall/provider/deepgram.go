package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// deepgram sends audio to Deepgram's pre-recorded API: one POST of the
// audio to /v1/listen, answered with the transcript. Each request carries
// the chunk's journal key as a tag, which Deepgram's request log shows, so
// an ambiguous request can be looked up.
type deepgram struct {
	baseURL, model, apiKey string
	// project, needed only to look requests up, names the project whose
	// request log is searched.
	project string
}

// limits: Deepgram takes up to 2 GB per request.
func (d *deepgram) limits(string) Limits { return Limits{MaxBytes: 2 << 30} }

type deepgramResponse struct {
	Metadata struct {
		RequestID string  `json:"request_id"`
		Duration  float64 `json:"duration"`
	} `json:"metadata"`
	Results struct {
		Channels []struct {
			Alternatives []struct {
				Transcript string `json:"transcript"`
			} `json:"alternatives"`
		} `json:"channels"`
		Utterances []struct {
			Start      float64 `json:"start"`
			End        float64 `json:"end"`
			Transcript string  `json:"transcript"`
		} `json:"utterances"`
	} `json:"results"`
}

// transcribe sends one POST of the audio.
func (d *deepgram) transcribe(ctx context.Context, paid *http.Client, c Chunk) (Transcript, error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return Transcript{}, &LocalError{fmt.Errorf("read chunk %s: %w", c.Path, err)}
	}
	q := url.Values{"model": {d.model}, "smart_format": {"true"}, "utterances": {"true"}, "tag": {c.Key}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(d.baseURL, "/")+"/v1/listen?"+q.Encode(), bytes.NewReader(audio))
	if err != nil {
		return Transcript{}, &LocalError{err}
	}
	req.Header.Set("Content-Type", "audio/mpeg")
	if d.apiKey != "" {
		req.Header.Set("Authorization", "Token "+d.apiKey)
	}
	data, reqID, err := call(paid, req, "deepgram", "Dg-Request-Id")
	if err != nil {
		return Transcript{}, err
	}
	return parseDeepgram(data, reqID)
}

func parseDeepgram(data []byte, reqID string) (Transcript, error) {
	var r deepgramResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return Transcript{}, fmt.Errorf("deepgram: unreadable answer (request %s): %w", reqID, err)
	}
	t := Transcript{RequestID: r.Metadata.RequestID, Duration: seconds(r.Metadata.Duration), Segments: []Segment{}}
	if t.RequestID == "" {
		t.RequestID = reqID
	}
	for _, ch := range r.Results.Channels {
		if len(ch.Alternatives) > 0 {
			t.Text = strings.TrimSpace(ch.Alternatives[0].Transcript)
			break
		}
	}
	for _, u := range r.Results.Utterances {
		t.Segments = append(t.Segments, Segment{Start: seconds(u.Start), End: seconds(u.End), Text: strings.TrimSpace(u.Transcript)})
	}
	if len(t.Segments) == 0 && t.Text != "" {
		t.Segments = append(t.Segments, Segment{End: t.Duration, Text: t.Text})
	}
	return t, nil
}

// lookup searches the project's request log, from
// shortly before the request was sent, for a request with the key's tag.
// The log keeps no transcript, so a request found is applied without one.
func (d *deepgram) lookup(ctx context.Context, reads *http.Client, key string, ev journal.Evidence) (Found, error) {
	if d.project == "" {
		return Found{}, fmt.Errorf("deepgram: looking a request up needs the project id (--deepgram-project)")
	}
	q := url.Values{"limit": {"1000"}}
	if sent, ok := ev["sent_at"].(string); ok {
		if at, err := time.Parse(time.RFC3339Nano, sent); err == nil {
			q.Set("start", at.Add(-time.Minute).UTC().Format(time.RFC3339))
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(d.baseURL, "/")+"/v1/projects/"+url.PathEscape(d.project)+"/requests?"+q.Encode(), nil)
	if err != nil {
		return Found{}, err
	}
	if d.apiKey != "" {
		req.Header.Set("Authorization", "Token "+d.apiKey)
	}
	data, _, err := call(reads, req, "deepgram", "Dg-Request-Id")
	if err != nil {
		return Found{}, err
	}
	var out struct {
		Requests []struct {
			RequestID string `json:"request_id"`
			Path      string `json:"path"`
			Response  struct {
				Code    int `json:"code"`
				Details struct {
					USD  float64  `json:"usd"`
					Tags []string `json:"tags"`
				} `json:"details"`
			} `json:"response"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return Found{}, fmt.Errorf("deepgram: unreadable request log: %w", err)
	}
	for _, r := range out.Requests {
		tagged := strings.Contains(r.Path, "tag="+url.QueryEscape(key))
		for _, tag := range r.Response.Details.Tags {
			tagged = tagged || tag == key
		}
		if !tagged {
			continue
		}
		if r.Response.Code/100 != 2 {
			return Found{}, nil // answered with an error: not charged
		}
		return Found{Charged: true, RequestID: r.RequestID}, nil
	}
	return Found{}, nil
}
