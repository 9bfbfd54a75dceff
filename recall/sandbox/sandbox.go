// Package sandbox is recall-archive's built-in speech-to-text provider: an
// OpenAI-compatible server on loopback that charges for what it
// transcribes, keeps a ledger of those charges, returns a clearly labelled
// placeholder transcript, and injects faults on request. It is a test
// double that ships with the product: it lets the archive's main job run on
// a fresh machine with no account, and lets tests count what was paid for.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/media"
)

// Fault is what the sandbox does to one transcription request.
type Fault string

// The faults.
const (
	None Fault = ""
	// ChargeDrop reads and charges the request, then resets the
	// connection without answering.
	ChargeDrop Fault = "charge-drop"
	// Hang reads and charges the request, then never answers.
	Hang Fault = "hang"
	// TooMany answers 429 with Retry-After, charging nothing.
	TooMany Fault = "429"
	// Status500, Status502 and Status503 answer that status, charging
	// nothing.
	Status500 Fault = "500"
	Status502 Fault = "502"
	Status503 Fault = "503"
)

var faults = []Fault{ChargeDrop, Hang, TooMany, Status500, Status502, Status503}

// Plan says which requests meet which fault: by request number (1 for the
// first transcription request), or at random with a given probability.
type Plan struct {
	ByRequest map[int]Fault
	Rates     map[Fault]float64
	// Seed makes the random faults repeatable.
	Seed uint64
}

// ParsePlan reads a fault plan such as "1:charge-drop,3:429" (request
// numbers) or "hang=5%,503=10%" (probabilities), or both, comma-separated.
func ParsePlan(spec string) (Plan, error) {
	p := Plan{ByRequest: map[int]Fault{}, Rates: map[Fault]float64{}, Seed: 1}
	if strings.TrimSpace(spec) == "" {
		return p, nil
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if n, f, ok := strings.Cut(part, ":"); ok {
			num, err := strconv.Atoi(n)
			if err != nil || num < 1 {
				return p, fmt.Errorf("fault %q: the request number %q must be 1 or more", part, n)
			}
			if !known(Fault(f)) {
				return p, unknownFault(part, f)
			}
			p.ByRequest[num] = Fault(f)
			continue
		}
		if f, rate, ok := strings.Cut(part, "="); ok {
			pct, err := strconv.ParseFloat(strings.TrimSuffix(rate, "%"), 64)
			if err != nil || pct < 0 || pct > 100 || !strings.HasSuffix(rate, "%") {
				return p, fmt.Errorf("fault %q: the rate %q must be a percentage such as 5%%", part, rate)
			}
			if !known(Fault(f)) {
				return p, unknownFault(part, f)
			}
			p.Rates[Fault(f)] = pct / 100
			continue
		}
		return p, fmt.Errorf("fault %q: write N:FAULT (request N) or FAULT=P%% (at random)", part)
	}
	return p, nil
}

func known(f Fault) bool {
	for _, k := range faults {
		if k == f {
			return true
		}
	}
	return false
}

func unknownFault(part, f string) error {
	names := make([]string, len(faults))
	for i, k := range faults {
		names[i] = string(k)
	}
	return fmt.Errorf("fault %q: unknown fault %q; use one of %s", part, f, strings.Join(names, ", "))
}

// Charge is one paid request.
type Charge struct {
	RequestID string        `json:"request_id"`
	Tag       string        `json:"tag,omitempty"`
	Model     string        `json:"model"`
	Duration  time.Duration `json:"duration_ns"`
	Amount    ledger.Amount `json:"amount_micro_usd"`
	Fault     Fault         `json:"fault,omitempty"`
	At        time.Time     `json:"at"`
	// Transcript is the answer the sandbox gave, or would have given had
	// the fault not stopped it: what a provider's look-up returns.
	Transcript json.RawMessage `json:"transcript"`
}

// Options configure a Server.
type Options struct {
	// PricePerMinute in micro-dollars; default 6000 ($0.006, whisper-1).
	PricePerMinute ledger.Amount
	Plan           Plan
	// Tools probe uploads for their duration; without ffprobe the sandbox
	// estimates it from the size at 32 kbit/s.
	Tools media.Tools
	// TagHeader names the request header whose value is kept with each
	// charge, so that charges can be looked up by it. Default X-Recall-Key.
	// A request without it (from a client that speaks plain OpenAI) is
	// tagged by the name of its file, "file:NAME".
	TagHeader string
	// Latency delays each transcription's answer, as a real provider's
	// work does.
	Latency time.Duration
}

// Server is the sandbox provider, an http.Handler.
type Server struct {
	opts Options

	mu       sync.Mutex
	requests int
	empty    int
	charges  []Charge
	rng      *rand.Rand
	hangs    sync.WaitGroup
	closing  chan struct{}
}

// New returns a sandbox with opts.
func New(opts Options) *Server {
	if opts.PricePerMinute <= 0 {
		opts.PricePerMinute = 6000
	}
	if opts.TagHeader == "" {
		opts.TagHeader = "X-Recall-Key"
	}
	return &Server{opts: opts, rng: rand.New(rand.NewPCG(opts.Plan.Seed, 0x5a4d)), closing: make(chan struct{})}
}

// Charges returns every charge so far, in order.
func (s *Server) Charges() []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Charge(nil), s.charges...)
}

// Requests returns how many transcription requests arrived, paid or not.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// EmptyUploads returns how many transcription requests carried an empty
// file (refused, charging nothing).
func (s *Server) EmptyUploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.empty
}

// Close ends the requests the sandbox holds hanging.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	s.mu.Unlock()
	s.hangs.Wait()
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/audio/transcriptions":
		s.transcribe(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/sandbox/charges":
		s.listCharges(w, r)
	default:
		apiError(w, http.StatusNotFound, "no such endpoint in the sandbox: "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) fault() (int, Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	n := s.requests
	if f, ok := s.opts.Plan.ByRequest[n]; ok {
		return n, f
	}
	for _, f := range faults {
		if rate := s.opts.Plan.Rates[f]; rate > 0 && s.rng.Float64() < rate {
			return n, f
		}
	}
	return n, None
}

func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	n, fault := s.fault()
	reqID := fmt.Sprintf("sbx_%06d", n)
	w.Header().Set("X-Request-Id", reqID)
	switch fault {
	case TooMany:
		w.Header().Set("Retry-After", "1")
		apiError(w, http.StatusTooManyRequests, "sandbox: rate limited (fault injected); nothing was charged")
		return
	case Status500, Status502, Status503:
		code, _ := strconv.Atoi(string(fault))
		apiError(w, code, "sandbox: server error (fault injected); nothing was charged")
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		apiError(w, http.StatusBadRequest, "sandbox: the request is not multipart form data: "+err.Error())
		return
	}
	model := r.FormValue("model")
	file, header, err := r.FormFile("file")
	if err != nil || model == "" {
		apiError(w, http.StatusBadRequest, "sandbox: send a file and a model")
		return
	}
	defer file.Close()
	dur, sum, err := s.measure(r, file)
	if err != nil {
		apiError(w, http.StatusBadRequest, "sandbox: "+err.Error())
		return
	}
	if s.opts.Latency > 0 {
		select {
		case <-time.After(s.opts.Latency):
		case <-r.Context().Done():
		}
	}
	diarized := r.FormValue("response_format") == "diarized_json"
	words := !diarized && slices.Contains(r.Form["timestamp_granularities[]"], "word")
	placed := placeholder(dur, sum, words, diarized)
	if lang := r.FormValue("language"); lang != "" {
		placed["language"] = lang // the language asked for; English otherwise, as if detected
	}
	answer, _ := json.Marshal(placed)
	tag := r.Header.Get(s.opts.TagHeader)
	if tag == "" {
		tag = "file:" + header.Filename
	}
	charge := Charge{RequestID: reqID, Tag: tag, Model: model, Duration: dur,
		Amount: s.price(dur), Fault: fault, At: time.Now(), Transcript: answer}
	s.mu.Lock()
	s.charges = append(s.charges, charge)
	s.mu.Unlock()

	switch fault {
	case ChargeDrop:
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			c.Close()
		}
		return
	case Hang:
		s.hangs.Add(1)
		defer s.hangs.Done()
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

// measure reads the upload and returns its duration and SHA-256.
func (s *Server) measure(r *http.Request, file io.Reader) (time.Duration, string, error) {
	tmp, err := os.CreateTemp("", "sandbox-upload-*"+filepath.Ext(""))
	if err != nil {
		return 0, "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	size, err := io.Copy(io.MultiWriter(tmp, h), file)
	tmp.Close()
	if err != nil {
		return 0, "", err
	}
	if size == 0 {
		s.mu.Lock()
		s.empty++
		s.mu.Unlock()
		return 0, "", fmt.Errorf("the file is empty")
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if info, err := s.opts.Tools.Probe(r.Context(), tmp.Name()); err == nil && info.Duration > 0 {
		return info.Duration, sum, nil
	}
	return time.Duration(size) * time.Second / 4000, sum, nil // 32 kbit/s
}

// price is the cost of d, billed per started second.
func (s *Server) price(d time.Duration) ledger.Amount {
	secs := int64((d + time.Second - 1) / time.Second)
	return ledger.Amount((secs*int64(s.opts.PricePerMinute) + 59) / 60)
}

// placeholder is the sandbox's transcript: no recognition, only a label
// and segments of up to 10 s, so that timestamps can be checked; with
// words, also each word's time, as OpenAI gives them (verbose_json's
// words, without punctuation). Asked for diarized_json, as OpenAI's
// diarizing model answers, it labels speakers instead: turns of 5 s, A's
// then B's, the last two sharing what is left, so that even a recording
// of a second has two speakers.
func placeholder(d time.Duration, sum string, words, diarized bool) map[string]any {
	secs := d.Seconds()
	step, speakers := 10.0, []string{""}
	if diarized {
		step, speakers = 5, []string{"A", "B"}
	}
	var segs, timed []map[string]any
	for start, i := 0.0, 0; start < secs; i++ {
		end := min(start+step, secs)
		if diarized && i%2 == 0 && start+2*step > secs {
			end = start + (secs-start)/2 // A's half of what is left
		}
		text := fmt.Sprintf("[sandbox] segment %d, %.1f to %.1f s", i+1, start, end)
		seg := map[string]any{"id": i, "start": start, "end": end, "text": text}
		if who := speakers[i%len(speakers)]; who != "" {
			seg["type"], seg["speaker"] = "transcript.text.segment", who
		}
		segs = append(segs, seg)
		timed = append(timed, placeholderWords(text, start, end)...)
		start = end
	}
	answer := map[string]any{
		"task": "transcribe", "language": "english", "duration": secs,
		"text":     fmt.Sprintf("[sandbox transcript: no speech was recognised; %.1f s of audio, sha256 %s]", secs, sum[:12]),
		"segments": segs,
	}
	if words {
		answer["words"] = timed
	}
	return answer
}

// placeholderWords times the words of text from start to end (seconds):
// each an equal share, not one by its length, and said in the first
// four fifths of it, so that cues timed by these words differ from cues
// timed by the segment.
func placeholderWords(text string, start, end float64) []map[string]any {
	fields := strings.Fields(text)
	share := (end - start) / float64(len(fields))
	ms := func(f float64) float64 { return math.Round(f*1000) / 1000 }
	var out []map[string]any
	for i, f := range fields {
		at := start + float64(i)*share
		out = append(out, map[string]any{"word": strings.Trim(f, "[],."), "start": ms(at), "end": ms(at + share*4/5)})
	}
	return out
}

func (s *Server) listCharges(w http.ResponseWriter, r *http.Request) {
	tag := r.URL.Query().Get("tag")
	out := []Charge{}
	for _, c := range s.Charges() {
		if tag == "" || c.Tag == tag {
			out = append(out, c)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"charges": out})
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "sandbox_error"}})
}
