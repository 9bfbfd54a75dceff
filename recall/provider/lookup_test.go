package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/provider"
)

const key = "transcribe/abc/0/deepgram/nova-3"

// sentAt is the evidence of a request committed as sending a minute ago.
func sentAt() journal.Evidence {
	return journal.Evidence{"sent_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)}
}

// deepgramLog is a stand-in of GET /v1/projects/{id}/requests: records
// paged by page and limit, as the SDKs' ListProjectRequestsV1Response, in
// the older shape (status and tags under response, as deepgram-python-sdk
// v3.9.0's UsageRequest) or the current one (code at the top level, as
// v7.6.0's ProjectRequestResponse), or in a shape neither has.
type deepgramLog struct {
	records []map[string]any
	shape   string // "current", "older", "unknown"
	pages   []string
}

func (l *deepgramLog) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !strings.HasSuffix(r.URL.Path, "/requests") || q.Get("start") == "" || q.Get("end") == "" {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"err_code": "Bad Request", "err_msg": "start and end are required"})
		return
	}
	for _, p := range []string{"start", "end"} {
		if _, err := time.Parse(time.RFC3339, q.Get(p)); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 10 // the documented default
	}
	limit = min(limit, 1000) // the documented range
	page, _ := strconv.Atoi(q.Get("page"))
	l.pages = append(l.pages, q.Get("page"))
	from, to := min(page*limit, len(l.records)), min((page+1)*limit, len(l.records))
	if l.shape == "unknown" {
		json.NewEncoder(w).Encode(map[string]any{"data": l.records[from:to], "next": page + 1})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"page": page, "limit": limit, "requests": l.records[from:to]})
}

// record is one request of the log, tagged tag, answered code.
func (l *deepgramLog) record(i int, tag string, code int) map[string]any {
	id := fmt.Sprintf("0b2e6f3a-%04d", i)
	path := "/v1/listen?model=nova-3&smart_format=true&tag=" + url.QueryEscape(tag)
	created := time.Now().Add(-time.Duration(i) * time.Second).UTC().Format(time.RFC3339)
	if l.shape == "older" {
		return map[string]any{"request_id": id, "project_uuid": "p", "created": created, "path": "/v1/listen",
			"response": map[string]any{"code": code, "completed": created, "details": map[string]any{"usd": 0.0043, "tags": []string{tag}, "method": "sync"}}}
	}
	return map[string]any{"request_id": id, "project_uuid": "p", "created": created, "path": path, "api_key_id": "k", "code": code, "deployment": "hosted", "response": map[string]any{}}
}

// TestDeepgramLookupReadsEveryPage: a charged request among 2,500 later
// ones, out of order, is found on the third page, in either shape of the
// log; when it is not there, every page was read before it is called not
// charged; a refused one is not charged; a log in a shape recall does not
// know, or a record without a status, proves nothing.
func TestDeepgramLookupReadsEveryPage(t *testing.T) {
	for _, shape := range []string{"current", "older"} {
		t.Run(shape, func(t *testing.T) {
			for _, tt := range []struct {
				name    string
				code    int // of our request; 0: not in the log
				charged bool
			}{{"charged", 200, true}, {"refused", 400, false}, {"absent", 0, false}} {
				t.Run(tt.name, func(t *testing.T) {
					l := &deepgramLog{shape: shape}
					for i := range 2500 {
						l.records = append(l.records, l.record(i, fmt.Sprintf("transcribe/other/%d", i), 200))
					}
					if tt.code != 0 {
						l.records = append(l.records, l.record(9999, key, tt.code))
					}
					rand.New(rand.NewPCG(1, 2)).Shuffle(len(l.records)-1, func(i, j int) { l.records[i], l.records[j] = l.records[j], l.records[i] })
					url := serve(t, l.serve)
					p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-3", APIKey: "k", Project: "p"})
					found, err := p.Lookup(context.Background(), key, sentAt())
					if err != nil || found.Charged != tt.charged {
						t.Fatalf("look-up: %+v, %v; want charged %v", found, err, tt.charged)
					}
					if !tt.charged && strings.Join(l.pages, ",") != "0,1,2" {
						t.Fatalf("pages read: %v; want all three before saying not charged", l.pages)
					}
				})
			}
		})
	}
	for _, tt := range []struct {
		name   string
		log    *deepgramLog
		mangle func(map[string]any)
	}{
		{"unknown shape", &deepgramLog{shape: "unknown"}, nil},
		{"no status", &deepgramLog{shape: "current"}, func(r map[string]any) { delete(r, "code") }},
		{"no query nor tags", &deepgramLog{shape: "current"}, func(r map[string]any) { r["path"] = "/v1/listen" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 3 {
				r := tt.log.record(i, "transcribe/other", 200)
				if tt.mangle != nil {
					tt.mangle(r)
				}
				tt.log.records = append(tt.log.records, r)
			}
			url := serve(t, tt.log.serve)
			p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: url, Model: "nova-3", APIKey: "k", Project: "p"})
			_, err := p.Lookup(context.Background(), key, sentAt())
			ue, ok := provider.Unproven(err)
			if !ok || ue.Check == "" {
				t.Fatalf("look-up of a log recall cannot read: %v; want it unproven, with what to check", err)
			}
		})
	}
	t.Run("no send time", func(t *testing.T) {
		p := newProvider(t, provider.Options{Name: "deepgram", BaseURL: "http://127.0.0.1:1", Model: "nova-3", APIKey: "k", Project: "p"})
		if _, err := p.Lookup(context.Background(), key, nil); err == nil {
			t.Fatal("a look-up without the time the request was sent proved something")
		}
	})
}

// assemblyList is a stand-in of GET /v2/transcript: newest first, pages of
// limit linked by page_details.prev_url with before_id, items and pages in
// the spec's TranscriptList shape (every required field).
type assemblyList struct {
	items []map[string]any // newest first
	shape string
	pages int
}

func (l *assemblyList) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2/transcript" {
		http.NotFound(w, r)
		return
	}
	l.pages++
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 200)
	from := 0
	if before := q.Get("before_id"); before != "" {
		for i, it := range l.items {
			if it["id"] == before {
				from = i + 1
			}
		}
	}
	to := min(from+limit, len(l.items))
	page := l.items[from:to]
	base := "https://api.assemblyai.com/v2/transcript?limit=" + strconv.Itoa(limit)
	var prev any
	if to < len(l.items) {
		prev = base + "&before_id=" + page[len(page)-1]["id"].(string)
	}
	if l.shape == "unknown" {
		json.NewEncoder(w).Encode(map[string]any{"items": page})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"page_details": map[string]any{"limit": limit, "result_count": len(page), "current_url": base, "prev_url": prev, "next_url": nil},
		"transcripts":  page,
	})
}

func (l *assemblyList) add(id, audio string, created time.Time) {
	l.items = append(l.items, map[string]any{"id": id, "resource_url": "https://api.assemblyai.com/v2/transcript/" + id,
		"status": "completed", "created": created.UTC().Format("2006-01-02T15:04:05.999999"), "completed": nil, "audio_url": audio, "error": nil})
}

// TestAssemblyAILookupFollowsPrevURL: the job of an upload behind 450
// newer transcripts is found on the third page, through prev_url; when it
// is not there, the list is read back to before the request was sent and
// no further; a page in a shape recall does not know, or transcripts whose
// audio was deleted, prove nothing.
func TestAssemblyAILookupFollowsPrevURL(t *testing.T) {
	const upload = "https://cdn.assemblyai.com/upload/ours"
	ev := func() journal.Evidence {
		e := sentAt()
		e["assemblyai_upload_url"] = upload
		return e
	}
	build := func(withJob bool) *assemblyList {
		l := &assemblyList{}
		now := time.Now()
		for i := range 450 {
			l.add(fmt.Sprintf("newer-%03d", i), fmt.Sprintf("https://cdn.assemblyai.com/upload/n%d", i), now.Add(-time.Duration(i)*time.Millisecond))
		}
		if withJob {
			l.add("ours-job", upload, now.Add(-50*time.Second))
		}
		for i := range 450 { // transcripts made before the request: read no further than their first page
			l.add(fmt.Sprintf("older-%03d", i), fmt.Sprintf("https://cdn.assemblyai.com/upload/o%d", i), now.Add(-time.Hour-time.Duration(i)*time.Second))
		}
		return l
	}
	for _, withJob := range []bool{true, false} {
		t.Run(fmt.Sprintf("job=%v", withJob), func(t *testing.T) {
			l := build(withJob)
			url := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/v2/transcript/") {
					json.NewEncoder(w).Encode(map[string]any{"id": "ours-job", "status": "completed", "text": "hi", "audio_duration": 1})
					return
				}
				l.serve(w, r)
			})
			p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-2", APIKey: "k"})
			found, err := p.Lookup(context.Background(), key, ev())
			if err != nil || found.Charged != withJob {
				t.Fatalf("look-up: %+v, %v; want charged %v", found, err, withJob)
			}
			if want := 3; !withJob && l.pages != want+1 {
				t.Fatalf("%d pages read; want %d and the first page older than the request", l.pages, want+1)
			}
		})
	}
	for _, tt := range []struct {
		name  string
		build func() *assemblyList
	}{
		{"unknown shape", func() *assemblyList { l := build(false); l.shape = "unknown"; return l }},
		{"deleted audio", func() *assemblyList {
			l := build(false)
			l.items[10]["audio_url"] = "http://deleted_by_user" // as the spec's example shows one
			return l
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.build()
			url := serve(t, l.serve)
			p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: url, Model: "universal-2", APIKey: "k"})
			_, err := p.Lookup(context.Background(), key, ev())
			if ue, ok := provider.Unproven(err); !ok || ue.Check == "" {
				t.Fatalf("look-up: %v; want it unproven, with what to check", err)
			}
		})
	}
}

// TestLookupsMeetTheSandbox: the built-in sandbox answers every charge of
// a tag at once; an answer that is not its list proves nothing.
func TestLookupsMeetTheSandbox(t *testing.T) {
	url := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"results":[]}`)) })
	p := newProvider(t, provider.Options{Name: "sandbox", BaseURL: url, Model: "whisper-1"})
	if _, err := p.Lookup(context.Background(), key, nil); err == nil {
		t.Fatal("an answer without charges proved the request was not charged")
	}
}
