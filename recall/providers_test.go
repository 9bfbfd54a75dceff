package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
)

// standIn is a loopback server playing a provider's API, from the
// provider's public documentation, with a fault on demand. It counts what
// it would have charged for.
type standIn struct {
	mu      sync.Mutex
	charged map[string]int // by tag or job
	jobs    map[string]*standInJob
	log     []map[string]any
	fault   string // "drop-after-charge", "job-error", ""
}

type standInJob struct {
	id, audioURL, status string
	polls                int
}

func newStandIn(fault string) *standIn {
	return &standIn{charged: map[string]int{}, jobs: map[string]*standInJob{}, fault: fault}
}

// drop resets the connection without an answer.
func drop(w http.ResponseWriter) {
	if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
}

// deepgram plays POST /v1/listen and GET /v1/projects/{id}/requests.
func (s *standIn) deepgram(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/listen":
		if r.Header.Get("Authorization") != "Token dg-key" || r.Header.Get("Content-Type") != "audio/mpeg" {
			http.Error(w, `{"err_msg":"bad auth or type"}`, http.StatusUnauthorized)
			return
		}
		io.Copy(io.Discard, r.Body)
		tag := r.URL.Query().Get("tag")
		id := fmt.Sprintf("dg-%d", len(s.log)+1)
		s.charged[tag]++
		// The request log's current shape (deepgram-python-sdk v7.6.0's
		// ProjectRequestResponse): the status at the top level.
		s.log = append(s.log, map[string]any{"request_id": id, "created": time.Now().UTC().Format(time.RFC3339), "path": r.URL.RequestURI(),
			"code": 200, "response": map[string]any{}})
		if s.fault == "drop-after-charge" {
			s.fault = ""
			drop(w)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"metadata": map[string]any{"request_id": id, "duration": 2.0},
			"results": map[string]any{
				"channels":   []any{map[string]any{"alternatives": []any{map[string]any{"transcript": "hello from the stand-in"}}}},
				"utterances": []any{map[string]any{"start": 0.5, "end": 1.5, "transcript": "hello from the stand-in"}},
			},
		})
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/requests"):
		json.NewEncoder(w).Encode(map[string]any{"page": 0, "limit": 1000, "requests": s.log})
	default:
		http.NotFound(w, r)
	}
}

// assemblyai plays upload, transcript creation, polling and listing.
func (s *standIn) assemblyai(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "aai-key" {
		http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/upload":
		io.Copy(io.Discard, r.Body)
		json.NewEncoder(w).Encode(map[string]string{"upload_url": fmt.Sprintf("https://cdn.stand-in/upload/%d", len(s.jobs)+100)})
	case r.Method == http.MethodPost && r.URL.Path == "/v2/transcript":
		var in struct {
			AudioURL     string   `json:"audio_url"`
			SpeechModels []string `json:"speech_models"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		if len(in.SpeechModels) == 0 {
			// The spec's TranscriptOptionalParams requires speech_models.
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "speech_models is required", "status": "error"})
			return
		}
		job := &standInJob{id: fmt.Sprintf("aai-%d", len(s.jobs)+1), audioURL: in.AudioURL, status: "queued"}
		s.jobs[job.id] = job
		s.charged[job.id]++
		if s.fault == "drop-after-charge" {
			s.fault = ""
			drop(w)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"id": job.id, "status": job.status})
	case r.Method == http.MethodGet && r.URL.Path == "/v2/transcript":
		list := []map[string]any{}
		for _, j := range s.jobs {
			list = append(list, map[string]any{"id": j.id, "status": j.status, "audio_url": j.audioURL,
				"created": time.Now().UTC().Format("2006-01-02T15:04:05.999999"), "completed": nil, "error": nil, "resource_url": "http://" + r.Host + "/v2/transcript/" + j.id})
		}
		json.NewEncoder(w).Encode(map[string]any{"transcripts": list, "page_details": map[string]any{"limit": 200, "result_count": len(list),
			"current_url": "http://" + r.Host + r.URL.RequestURI(), "prev_url": nil, "next_url": nil}})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/transcript/"):
		job := s.jobs[strings.TrimPrefix(r.URL.Path, "/v2/transcript/")]
		if job == nil || s.fault == "poll-404" {
			http.NotFound(w, r)
			return
		}
		job.polls++
		if job.polls >= 2 && job.status != "completed" {
			job.status = "completed"
			if s.fault == "job-error" {
				job.status = "error"
			}
		} else if job.status == "queued" {
			job.status = "processing"
		}
		out := map[string]any{"id": job.id, "status": job.status, "audio_url": job.audioURL, "audio_duration": 2.0}
		if job.status == "completed" {
			out["text"] = "Hello there. From the stand-in."
			out["words"] = []map[string]any{{"text": "Hello", "start": 100, "end": 400}, {"text": "there.", "start": 400, "end": 800},
				{"text": "From", "start": 900, "end": 1100}, {"text": "the", "start": 1100, "end": 1200}, {"text": "stand-in.", "start": 1200, "end": 1700}}
		}
		if job.status == "error" {
			out["error"] = "the audio could not be decoded"
		}
		json.NewEncoder(w).Encode(out)
	default:
		http.NotFound(w, r)
	}
}

func standInProvider(t *testing.T, o provider.Options) *provider.Provider {
	p, err := provider.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runWith(t *testing.T, w *world, p *provider.Provider) recall.RunReport {
	t.Helper()
	rep, err := w.a.Run(context.Background(), "b", recall.RunOptions{Provider: p, PricePerMinute: 4300, CacheDir: w.cache, Out: w.out})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestDeepgram(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"", "drop-after-charge"} {
		t.Run("fault="+fault, func(t *testing.T) {
			w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
			s := newStandIn(fault)
			srv := httptest.NewServer(http.HandlerFunc(s.deepgram))
			defer srv.Close()
			dg := standInProvider(t, provider.Options{Name: "deepgram", BaseURL: srv.URL, Model: "nova-3", APIKey: "dg-key", Project: "p1", Timeout: 5 * time.Second})
			rep := runWith(t, w, dg)
			if fault == "" {
				if rep.Done != 1 {
					t.Fatalf("run: %+v", rep)
				}
				hits, _ := w.a.Search(context.Background(), "stand-in", 5, false)
				if len(hits) != 1 || hits[0].Start != 500*time.Millisecond {
					t.Fatalf("search: %+v, want the utterance at 0.5 s", hits)
				}
				return
			}
			if rep.Ambiguous != 1 {
				t.Fatalf("run: %+v, want the dropped request ambiguous", rep)
			}
			res, err := w.a.Reconcile(context.Background(), "b", dg)
			if err != nil || len(res) != 1 || res[0].State != journal.Applied {
				t.Fatalf("reconcile: %+v, %v; want applied, found by its tag", res, err)
			}
			// Deepgram keeps no transcript: the recording is paid for and
			// says so, and it is not sent again.
			rep = runWith(t, w, dg)
			if rep.Untranscribed != 1 || len(s.log) != 1 {
				t.Fatalf("after reconcile: %+v, %d requests", rep, len(s.log))
			}
		})
	}
}

func TestAssemblyAI(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fault string
		want  func(recall.RunReport) bool
	}{
		{"", func(r recall.RunReport) bool { return r.Done == 1 }},
		{"job-error", func(r recall.RunReport) bool { return r.Failed == 1 }},
		{"drop-after-charge", func(r recall.RunReport) bool { return r.Ambiguous == 1 }},
		// A refused poll says nothing of the job that was paid for.
		{"poll-404", func(r recall.RunReport) bool { return r.Ambiguous == 1 }},
	} {
		t.Run("fault="+tt.fault, func(t *testing.T) {
			w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
			s := newStandIn(tt.fault)
			srv := httptest.NewServer(http.HandlerFunc(s.assemblyai))
			defer srv.Close()
			aai := standInProvider(t, provider.Options{Name: "assemblyai", BaseURL: srv.URL, Model: "universal-3-pro", APIKey: "aai-key", Timeout: 5 * time.Second, PollEvery: 10 * time.Millisecond})
			rep := runWith(t, w, aai)
			if !tt.want(rep) {
				t.Fatalf("run with %q: %+v", tt.fault, rep)
			}
			ops, _ := w.a.Operations(context.Background(), "b")
			if ops[0].Evidence["assemblyai_upload_url"] == nil {
				t.Fatalf("the upload URL was not recorded: %+v", ops[0].Evidence)
			}
			switch tt.fault {
			case "":
				hits, _ := w.a.Search(context.Background(), "there", 5, false)
				if len(hits) != 1 || hits[0].Start != 100*time.Millisecond || hits[0].End != 800*time.Millisecond {
					t.Fatalf("search: %+v, want the first sentence, 0.1 to 0.8 s", hits)
				}
			case "drop-after-charge":
				// The job is still running at first: the look-up says so and
				// changes nothing; once it completed, it settles the request.
				res, err := w.a.Reconcile(context.Background(), "b", aai)
				if err != nil || len(res) != 1 || !strings.Contains(res[0].Error, "still processing") {
					t.Fatalf("first reconcile: %+v, %v", res, err)
				}
				res, err = w.a.Reconcile(context.Background(), "b", aai)
				if err != nil || len(res) != 1 || res[0].State != journal.Applied {
					t.Fatalf("reconcile: %+v, %v", res, err)
				}
				if rep := runWith(t, w, aai); rep.Done != 1 || len(s.jobs) != 1 {
					t.Fatalf("after reconcile: %+v, %d jobs", rep, len(s.jobs))
				}
			case "job-error":
				if rr, _ := w.a.RetryFailed(context.Background(), "b"); rr.Requests != 1 {
					t.Fatalf("a failed job is not retried: %+v", rr)
				}
			}
			for id, n := range s.charged {
				if n > 1 {
					t.Fatalf("%s charged %d times", id, n)
				}
			}
		})
	}
}
