package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
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
	// speakers, when not 0, asks for diarization (Deepgram takes no
	// count).
	speakers int
	hints    Hints
}

type deepgramResponse struct {
	Metadata struct {
		RequestID string  `json:"request_id"`
		Duration  float64 `json:"duration"`
	} `json:"metadata"`
	Results struct {
		Channels []struct {
			Alternatives []struct {
				Transcript string         `json:"transcript"`
				Words      []deepgramWord `json:"words"`
			} `json:"alternatives"`
			// DetectedLanguage is there when detect_language was asked.
			DetectedLanguage string `json:"detected_language"`
		} `json:"channels"`
		Utterances []struct {
			Start      float64        `json:"start"`
			End        float64        `json:"end"`
			Transcript string         `json:"transcript"`
			Speaker    *int           `json:"speaker"`
			Words      []deepgramWord `json:"words"`
		} `json:"utterances"`
	} `json:"results"`
}

// deepgramWord is a word of an alternative or an utterance, in seconds;
// punctuated_word comes with smart_format, speaker with diarize.
type deepgramWord struct {
	Word           string   `json:"word"`
	PunctuatedWord string   `json:"punctuated_word"`
	Start          float64  `json:"start"`
	End            float64  `json:"end"`
	Confidence     *float64 `json:"confidence"`
	Speaker        *int     `json:"speaker"`
}

// deepgramWords returns ws as recall's words, punctuated where Deepgram
// punctuated them.
func deepgramWords(ws []deepgramWord) []recording.Word {
	var out []recording.Word
	for _, w := range ws {
		text := w.PunctuatedWord
		if text == "" {
			text = w.Word
		}
		rw := recording.Word{Text: text, Start: seconds(w.Start), End: seconds(w.End), Confidence: w.Confidence}
		if w.Speaker != nil {
			rw.Speaker = speakerLabel(*w.Speaker)
		}
		out = append(out, rw)
	}
	return out
}

// transcribe sends one POST of the audio.
func (d *deepgram) transcribe(ctx context.Context, paid *http.Client, c Chunk) (recording.Transcript, error) {
	audio, err := os.ReadFile(c.Path)
	if err != nil {
		return recording.Transcript{}, &LocalError{fmt.Errorf("read chunk %s: %w", c.Path, err)}
	}
	q := url.Values{"model": {d.model}, "smart_format": {"true"}, "utterances": {"true"}, "tag": {c.Key}}
	if d.speakers != 0 {
		q.Set("diarize", "true")
	}
	if d.hints.Language != "" {
		q.Set("language", d.hints.Language)
	} else {
		// Without it, Deepgram takes the audio for English.
		q.Set("detect_language", "true")
	}
	// Nova-3 takes key terms; earlier models, keywords.
	terms := "keyterm"
	if !strings.HasPrefix(d.model, "nova-3") {
		terms = "keywords"
	}
	for _, t := range d.hints.Vocabulary {
		q.Add(terms, t)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(d.baseURL, "/")+"/v1/listen?"+q.Encode(), bytes.NewReader(audio))
	if err != nil {
		return recording.Transcript{}, &LocalError{err}
	}
	req.Header.Set("Content-Type", "audio/mpeg")
	if d.apiKey != "" {
		req.Header.Set("Authorization", "Token "+d.apiKey)
	}
	data, reqID, err := call(paid, req, "deepgram", "Dg-Request-Id")
	if err != nil {
		return recording.Transcript{}, err
	}
	return parseDeepgram(data, reqID)
}

func parseDeepgram(data []byte, reqID string) (recording.Transcript, error) {
	var r deepgramResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return recording.Transcript{}, fmt.Errorf("deepgram: unreadable answer (request %s): %w", reqID, err)
	}
	t := recording.Transcript{RequestID: r.Metadata.RequestID, Duration: seconds(r.Metadata.Duration), Segments: []recording.Segment{}, Timing: recording.TimingSegments}
	if t.RequestID == "" {
		t.RequestID = reqID
	}
	var words []recording.Word
	for _, ch := range r.Results.Channels {
		if len(ch.Alternatives) > 0 {
			alt := ch.Alternatives[0]
			t.Text = strings.TrimSpace(alt.Transcript)
			t.Language = LanguageTag(ch.DetectedLanguage)
			words = deepgramWords(alt.Words)
			break
		}
	}
	// Each utterance keeps its own words; utterances without them get
	// the channel's, by time.
	own := false
	for _, u := range r.Results.Utterances {
		seg := recording.Segment{Start: seconds(u.Start), End: seconds(u.End), Text: strings.TrimSpace(u.Transcript), Words: deepgramWords(u.Words)}
		if u.Speaker != nil {
			seg.Speaker = speakerLabel(*u.Speaker)
		}
		own = own || len(seg.Words) > 0
		t.Segments = append(t.Segments, seg)
	}
	if !own {
		withWords(t.Segments, words)
	}
	if len(t.Segments) == 0 && len(words) > 0 {
		t.Segments, t.Timing = sentences(words), recording.TimingWords
	}
	if len(t.Segments) == 0 {
		t.Timing = recording.TimingChunk
		if t.Text != "" {
			t.Segments = append(t.Segments, recording.Segment{End: t.Duration, Text: t.Text})
		}
	}
	return t, nil
}

// requestsPage is the page size of the request log look-ups ask for, the
// most the API gives.
const requestsPage = 1000

// lookup reads the project's request log, every page of it from shortly
// before the request was committed as sending until now, for a request
// with the key's tag, in either shape the log has had: the older with the
// status in response.code and the tags in response.details.tags, the
// current with the status in code. The log keeps no transcript, so a
// request found is applied without one. A request is not charged only
// when every page was read and recognised and none of its records is the
// request with a success.
func (d *deepgram) lookup(ctx context.Context, reads *http.Client, key string, ev journal.Evidence) (Found, error) {
	unproven := func(reason string) error {
		return &UnprovenError{Provider: "deepgram", Reason: reason,
			Check: "the project's usage page in Deepgram's console, for a request tagged " + key + " around the time 'recall-archive ambiguous' shows"}
	}
	if d.project == "" {
		return Found{}, unproven("looking a request up needs the project id (--deepgram-project or $DEEPGRAM_PROJECT_ID)")
	}
	start, ok := window(ev)
	if !ok {
		return Found{}, unproven("the time the request was sent is not recorded, so the request log cannot be read for it")
	}
	end := time.Now().Add(skew).UTC()
	seen := map[string]bool{}
	var refused *deepgramRecord
	for page := 0; ; page++ {
		if page == maxPages {
			return Found{}, unproven(fmt.Sprintf("the request log holds more than %d pages for the time since the request was sent", maxPages))
		}
		log, err := d.requests(ctx, reads, start, end, page)
		if err != nil {
			if _, ok := Unproven(err); ok {
				return Found{}, err
			}
			return Found{}, unproven("reading the request log: " + err.Error())
		}
		fresh := 0
		for _, r := range log.requests {
			if !seen[r.id] {
				seen[r.id] = true
				fresh++
			}
			if !r.tagged(key) {
				continue
			}
			if r.code/100 == 2 {
				return Found{Charged: true, RequestID: r.id}, nil
			}
			refused = &r
		}
		if len(log.requests) < log.limit {
			break // the last page
		}
		if fresh == 0 {
			return Found{}, unproven(fmt.Sprintf("page %d of the request log repeats the records of earlier pages: the log cannot be read to its end", page))
		}
	}
	if refused != nil {
		return Found{RequestID: refused.id}, nil // answered with an error: not charged
	}
	return Found{}, nil
}

// deepgramRecord is one record of the request log, in either shape.
type deepgramRecord struct {
	id   string
	code int
	path string
	tags []string
}

// tagged reports whether the record is of the request with the tag key.
func (r deepgramRecord) tagged(key string) bool {
	if u, err := url.Parse(r.path); err == nil && slices.Contains(u.Query()["tag"], key) {
		return true
	}
	return slices.Contains(r.tags, key)
}

// deepgramLog is one page of the request log.
type deepgramLog struct {
	requests []deepgramRecord
	// limit is the page's size: a page with fewer records is the last.
	limit int
}

// requests reads one page of the request log, as an *UnprovenError when
// its shape is not one recall recognises.
func (d *deepgram) requests(ctx context.Context, reads *http.Client, start, end time.Time, page int) (deepgramLog, error) {
	q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {end.Format(time.RFC3339)},
		"limit": {strconv.Itoa(requestsPage)}, "page": {strconv.Itoa(page)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(d.baseURL, "/")+"/v1/projects/"+url.PathEscape(d.project)+"/requests?"+q.Encode(), nil)
	if err != nil {
		return deepgramLog{}, err
	}
	if d.apiKey != "" {
		req.Header.Set("Authorization", "Token "+d.apiKey)
	}
	data, _, err := call(reads, req, "deepgram", "Dg-Request-Id")
	if err != nil {
		return deepgramLog{}, err
	}
	unknown := func(what string) error {
		return &UnprovenError{Provider: "deepgram", Reason: "the request log's page " + strconv.Itoa(page) + " is in a shape recall does not know: " + what,
			Check: "the project's usage page in Deepgram's console, around the time 'recall-archive ambiguous' shows"}
	}
	var raw struct {
		Limit    *float64 `json:"limit"`
		Requests *[]struct {
			RequestID string   `json:"request_id"`
			Path      string   `json:"path"`
			Code      *float64 `json:"code"`
			Response  *struct {
				Code    *float64 `json:"code"`
				Details *struct {
					Tags []string `json:"tags"`
				} `json:"details"`
			} `json:"response"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return deepgramLog{}, unknown(err.Error())
	}
	if raw.Requests == nil {
		return deepgramLog{}, unknown("no list of requests")
	}
	log := deepgramLog{limit: requestsPage}
	if raw.Limit != nil && *raw.Limit >= 1 && int(*raw.Limit) < requestsPage {
		log.limit = int(*raw.Limit) // the API gave smaller pages than asked
	}
	for i, r := range *raw.Requests {
		rec := deepgramRecord{id: r.RequestID, path: r.Path}
		switch {
		case r.Code != nil:
			rec.code = int(*r.Code)
		case r.Response != nil && r.Response.Code != nil:
			rec.code = int(*r.Response.Code)
		default:
			return deepgramLog{}, unknown(fmt.Sprintf("record %d (%s) has no response code", i, r.RequestID))
		}
		if r.Response != nil && r.Response.Details != nil {
			rec.tags = r.Response.Details.Tags
		}
		if rec.id == "" {
			return deepgramLog{}, unknown(fmt.Sprintf("record %d has no request id", i))
		}
		if !strings.Contains(rec.path, "?") && rec.tags == nil {
			return deepgramLog{}, unknown(fmt.Sprintf("record %s says neither its query nor its tags, so whose it is cannot be told", rec.id))
		}
		log.requests = append(log.requests, rec)
	}
	return log, nil
}

// speakerLabel names Deepgram's speaker n (from 0) as AssemblyAI and
// OpenAI do: A, B, ... Z, then AA, AB...
func speakerLabel(n int) string {
	if n < 0 {
		return ""
	}
	label := ""
	for n++; n > 0; n = (n - 1) / 26 {
		label = string(rune('A'+(n-1)%26)) + label
	}
	return label
}
