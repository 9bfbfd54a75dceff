package recall_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/sandbox"
	"github.com/rubicon-go/rubicon/recall/store"
)

// world is an archive with a batch of recordings and a sandbox provider on
// loopback.
type world struct {
	t       *testing.T
	a       *recall.Archive
	dbPath  string
	dir     string
	sandbox *sandbox.Server
	srv     *httptest.Server
	url     string
	out     string
	cache   string
	// timeout bounds each paid request.
	timeout time.Duration
	// later moves the database's clock ahead, in nanoseconds.
	later atomic.Int64
}

// pastLeases moves the database's clock past every lease taken so far.
func (w *world) pastLeases() {
	w.later.Add(int64(provider.DefaultTimeout + recall.LeaseMargin + time.Second))
}

func newWorld(t *testing.T, plan string, recordings map[string]time.Duration) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), out: t.TempDir(), cache: t.TempDir(), dbPath: filepath.Join(t.TempDir(), "recall.db")}
	for name, d := range recordings {
		testkit.Tone(t, filepath.Join(w.dir, name), 300, d, "-ac", "1")
	}
	var err error
	// The database's clock, which the tests move past leases.
	w.a, err = recall.Open(context.Background(), w.dbPath, recall.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(w.later.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.a.Close() })
	if _, err := w.a.Add(context.Background(), "b", []string{w.dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := sandbox.ParsePlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	w.sandbox = sandbox.New(sandbox.Options{Plan: p})
	w.srv = httptest.NewServer(w.sandbox)
	w.url = w.srv.URL
	t.Cleanup(func() {
		w.sandbox.Close()
		w.srv.Close()
	})
	return w
}

// provider is the sandbox at w.url, each request bounded by w.timeout
// (30 s if unset: on a busy machine under the race detector an answer
// can take seconds, and a request that times out is ambiguous, which
// the tests that do not set a timeout do not expect).
func (w *world) provider(name string) *provider.Provider {
	timeout := w.timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	p, err := provider.New(provider.Options{Name: name, BaseURL: w.url, Model: "whisper-1", Timeout: timeout})
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

// run runs the batch through the sandbox's server as a provider of real
// money (openai): the sandbox's own play money never meets a budget.
func (w *world) run(opts recall.RunOptions) recall.RunReport {
	w.t.Helper()
	if opts.Provider == nil {
		opts.Provider = w.provider("openai")
	}
	if opts.PricePerMinute == 0 {
		opts.PricePerMinute = 6000
	}
	opts.Out, opts.CacheDir = w.out, w.cache
	rep, err := w.a.Run(context.Background(), "b", opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

// paidPerKey counts the sandbox's charges per journal key.
func (w *world) paidPerKey() map[string]int {
	n := map[string]int{}
	for _, c := range w.sandbox.Charges() {
		n[c.Tag]++
	}
	return n
}

func (w *world) neverPaidTwice() {
	w.t.Helper()
	for key, n := range w.paidPerKey() {
		if n > 1 {
			w.t.Errorf("%s was paid for %d times", key, n)
		}
	}
}

func TestRunTranscribesEachContentOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"one.mp3": 3 * time.Second, "two.wav": 12 * time.Second})
	// A copy of one.mp3 under another name is the same content.
	data, _ := os.ReadFile(filepath.Join(w.dir, "one.mp3"))
	os.WriteFile(filepath.Join(w.dir, "one again.mp3"), data, 0o644)
	w.a.Add(context.Background(), "b", []string{w.dir}, recall.AddOptions{})

	rep := w.run(recall.RunOptions{Workers: 2})
	if rep.Done != 2 || rep.Paid != 2 || rep.Ambiguous != 0 || rep.Failed != 0 || rep.Waiting != 0 {
		t.Fatalf("run: %+v", rep)
	}
	if got := len(w.sandbox.Charges()); got != 2 {
		t.Fatalf("the sandbox charged %d requests, want 2 (two contents)", got)
	}
	outs, _ := filepath.Glob(filepath.Join(w.out, "*"))
	if len(outs) != 3*4 {
		t.Fatalf("%d output files, want 12 (3 files × 4 formats): %v", len(outs), outs)
	}
	srt, err := os.ReadFile(filepath.Join(w.out, "two."+shaPrefix(t, w, "two.wav")+".srt"))
	if err != nil || !strings.Contains(string(srt), "00:00:10,000 --> 00:00:12,") {
		t.Fatalf("srt of a 12 s recording: %v\n%s", err, srt)
	}

	// A second run pays for nothing.
	rep = w.run(recall.RunOptions{})
	if rep.Paid != 0 || len(w.sandbox.Charges()) != 2 || rep.Done != 2 {
		t.Fatalf("second run: %+v, %d charges", rep, len(w.sandbox.Charges()))
	}
}

func shaPrefix(t *testing.T, w *world, name string) string {
	sum, _, err := recall.HashFile(filepath.Join(w.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return sum[:8]
}

func TestRunChunksLongRecordings(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"long.mp3": 25 * time.Second})
	// 32 kbit/s is 4,000 bytes a second: 40,000 bytes per chunk means 3 chunks.
	rep := w.run(recall.RunOptions{MaxChunkBytes: 40_000})
	if rep.Done != 1 || len(w.sandbox.Charges()) != 3 {
		t.Fatalf("run: %+v, %d charges, want 3", rep, len(w.sandbox.Charges()))
	}
	vtt, err := os.ReadFile(filepath.Join(w.out, "long."+shaPrefix(t, w, "long.mp3")+".vtt"))
	if err != nil {
		t.Fatal(err)
	}
	// The last chunk starts near 17 s: its segments carry the offset.
	if !strings.Contains(string(vtt), "00:00:2") {
		t.Fatalf("the last chunk's timestamps do not carry its offset:\n%s", vtt)
	}
}

// TestEveryFaultLandsInItsState plays each fault of the sandbox on the
// first request and checks where the item lands, that nothing was paid
// twice, and what the ledger holds.
func TestEveryFaultLandsInItsState(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fault string
		state string // the content's state after the run
		held  bool   // the estimate stays held
	}{
		{"charge-drop", "ambiguous", true},
		{"hang", "ambiguous", true},
		{"429", "failed", false},
		{"500", "ambiguous", true},
		{"502", "ambiguous", true},
		{"503", "ambiguous", true},
	} {
		t.Run(tt.fault, func(t *testing.T) {
			w := newWorld(t, "1:"+tt.fault, map[string]time.Duration{"a.mp3": 2 * time.Second})
			w.timeout = 500 * time.Millisecond
			rep := w.run(recall.RunOptions{})
			got := map[string]int{"done": rep.Done, "ambiguous": rep.Ambiguous, "failed": rep.Failed, "waiting": rep.Waiting}
			if got[tt.state] != 1 {
				t.Fatalf("after %s: %+v, want the content %s", tt.fault, rep, tt.state)
			}
			st, _ := w.a.Status(context.Background(), "b")
			_ = st
			w.neverPaidTwice()
			// Running again sends nothing that may have been paid for.
			w.run(recall.RunOptions{})
			w.neverPaidTwice()
			if tt.state == "ambiguous" && w.sandbox.Requests() != 1 {
				t.Fatalf("an ambiguous chunk was sent again: %d requests", w.sandbox.Requests())
			}
			held := heldAmount(t, w)
			if tt.held != (held > 0) {
				t.Fatalf("after %s the batch holds %d, want held=%v", tt.fault, held, tt.held)
			}
		})
	}
}

func heldAmount(t *testing.T, w *world) ledger.Amount {
	t.Helper()
	st, err := w.a.Money(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	return st.Held
}

// TestRefusedConnectionsAreSafeFailures: with nothing listening, the
// request is never sent, the item fails safely, and nothing is held.
func TestRefusedConnectionsAreSafeFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	w.url = "http://" + ln.Addr().String()
	ln.Close()
	rep := w.run(recall.RunOptions{})
	if rep.Failed != 1 || w.sandbox.Requests() != 0 || heldAmount(t, w) != 0 {
		t.Fatalf("refused: %+v, %d requests, %d held", rep, w.sandbox.Requests(), heldAmount(t, w))
	}
	ops := journalStates(t, w)
	if ops[journal.FailedSafe] != 1 {
		t.Fatalf("journal: %v, want one failed_safe operation", ops)
	}
	_ = http.MethodGet
}

func journalStates(t *testing.T, w *world) map[journal.State]int {
	t.Helper()
	ops, err := w.a.Operations(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	n := map[journal.State]int{}
	for _, op := range ops {
		n[op.State]++
	}
	return n
}

func TestBudgetIsNeverExceeded(t *testing.T) {
	t.Parallel()
	recs := map[string]time.Duration{}
	for i := range 8 {
		recs[string(rune('a'+i))+".mp3"] = time.Duration(30+i) * time.Second
	}
	w := newWorld(t, "", recs)
	// At $0.006 a minute each recording costs 3,000 to 3,700
	// micro-dollars; 7,000 pays for two, whichever two the workers take.
	rep := w.run(recall.RunOptions{Workers: 4, Budget: 7000})
	var spent ledger.Amount
	for _, c := range w.sandbox.Charges() {
		spent += c.Amount
	}
	if spent > 7000 || rep.Done != 2 {
		t.Fatalf("budget 7000: spent %d, %+v", spent, rep)
	}
	if m, _ := w.a.Money(context.Background(), "b"); m.Spent != spent || m.Held != 0 || m.Budget != 7000 {
		t.Fatalf("the batch's money %+v disagrees with the sandbox's charges %d", m, spent)
	}
	if rep.Failed != 0 || rep.Refused != 8-rep.Done || len(rep.Refusals) != rep.Refused {
		t.Fatalf("the items over budget should be refused by it, not failed: %+v", rep)
	}
	for _, f := range rep.Refusals {
		if f.Needed < 3000 || f.Missing <= 0 || f.Missing > f.Needed {
			t.Errorf("refusal %+v: want what it needs and what the budget lacked", f)
		}
	}
}

// TestRetryAfterARefusalPaysOnce: a request the provider refused (429)
// is retried by retry-failed, holds its budget again, and is paid once.
func TestRetryAfterARefusalPaysOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "1:429", map[string]time.Duration{"a.mp3": 2 * time.Second})
	if rep := w.run(recall.RunOptions{}); rep.Failed != 1 {
		t.Fatalf("after a 429: %+v", rep)
	}
	rr, err := w.a.RetryFailed(context.Background(), "b")
	if err != nil || rr.Requests != 1 {
		t.Fatalf("retry-failed: %+v, %v", rr, err)
	}
	rep := w.run(recall.RunOptions{})
	if rep.Done != 1 || len(rep.Problems) != 0 || len(w.sandbox.Charges()) != 1 {
		t.Fatalf("after the retry: %+v, %d charges", rep, len(w.sandbox.Charges()))
	}
	m, _ := w.a.Money(context.Background(), "b")
	if m.Held != 0 || m.Spent != w.sandbox.Charges()[0].Amount {
		t.Fatalf("money %+v, charged %d", m, w.sandbox.Charges()[0].Amount)
	}
}

// TestResolveThenRetry: a person finds an ambiguous request was not
// charged; retry-failed then sends it again, and it is paid once.
func TestResolveThenRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "1:503", map[string]time.Duration{"a.mp3": 2 * time.Second})
	w.run(recall.RunOptions{})
	amb, err := w.a.Ambiguous(context.Background(), "b")
	if err != nil || len(amb) != 1 || amb[0].Held == 0 || !strings.HasSuffix(amb[0].Paths[0], "a.mp3") {
		t.Fatalf("ambiguous: %+v, %v", amb, err)
	}
	if rr, _ := w.a.RetryFailed(context.Background(), "b"); rr.Requests != 0 || len(rr.Left) != 1 {
		t.Fatalf("retry-failed touched an ambiguous request: %+v", rr)
	}
	if _, err := w.a.Resolve(context.Background(), amb[0].Key, recall.Decision{Applied: false, By: "ana", Note: "not in the sandbox's charges"}); !errors.Is(err, journal.ErrIllegalTransition) || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("not applied while the lease it was sent under runs: %v", err)
	}
	w.pastLeases()
	if _, err := w.a.Resolve(context.Background(), amb[0].Key, recall.Decision{Applied: false, By: "ana", Note: "not in the sandbox's charges"}); err != nil {
		t.Fatal(err)
	}
	if rr, _ := w.a.RetryFailed(context.Background(), "b"); rr.Requests != 1 {
		t.Fatalf("retry-failed after the resolution: %+v", rr)
	}
	rep := w.run(recall.RunOptions{})
	if rep.Done != 1 || len(w.sandbox.Charges()) != 1 {
		t.Fatalf("after resolve and retry: %+v, %d charges", rep, len(w.sandbox.Charges()))
	}
	if m, _ := w.a.Money(context.Background(), "b"); m.Held != 0 {
		t.Fatalf("money after all: %+v", m)
	}
}

// TestMissingFFmpegIsFixedByRetryFailed: without ffprobe the files fail
// before any payment; once it is there, retry-failed --safe-only queues
// them and a run transcribes them.
func TestMissingFFmpegIsFixedByRetryFailed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", nil)
	testkit.Tone(t, filepath.Join(w.dir, "late.mp3"), 440, 2*time.Second)
	broken, err := recall.Open(context.Background(), w.dbPath, recall.Options{Tools: media.Tools{FFprobe: "rubicon-no-such-ffprobe"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := broken.Add(context.Background(), "b", []string{w.dir}, recall.AddOptions{})
	broken.Close()
	if len(rep.Problems) != 1 || rep.Problems[0].State != recording.Failed {
		t.Fatalf("add without ffprobe: %+v", rep)
	}
	if run := w.run(recall.RunOptions{}); run.Done != 0 || w.sandbox.Requests() != 0 {
		t.Fatalf("a failed file was sent: %+v", run)
	}
	rr, err := w.a.RetryFailed(context.Background(), "b")
	if err != nil || rr.Items != 1 {
		t.Fatalf("retry-failed: %+v, %v", rr, err)
	}
	if run := w.run(recall.RunOptions{}); run.Done != 1 || len(w.sandbox.Charges()) != 1 {
		t.Fatalf("after retry-failed: %+v", run)
	}
}

// TestAwkwardNamesGoThrough: spaces, a newline and non-ASCII letters in a
// file name reach the transcript files, the newline made harmless.
func TestAwkwardNamesGoThrough(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"an interview\nwith Zoë, 日本.mp3": 2 * time.Second})
	if rep := w.run(recall.RunOptions{}); rep.Done != 1 {
		t.Fatalf("run: %+v", rep)
	}
	outs, _ := filepath.Glob(filepath.Join(w.out, "an interview_with Zoë, 日本.*.txt"))
	if len(outs) != 1 {
		entries, _ := os.ReadDir(w.out)
		t.Fatalf("transcript files: %v", entries)
	}
}

// TestChunkCuesDoNotOverlap cuts a recording in three at instants that
// fall inside MP3 frames: each chunk is planned in whole frames, lasts for
// the provider exactly what the plan says, and the cues of one chunk end
// where the next chunk's begin.
func TestChunkCuesDoNotOverlap(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"long.mp3": 25 * time.Second})
	rep := w.run(recall.RunOptions{MaxChunkBytes: 40_000, Provider: w.provider("sandbox")})
	if rep.Done != 1 || len(w.sandbox.Charges()) != 3 {
		t.Fatalf("run: %+v, %d charges, want 3", rep, len(w.sandbox.Charges()))
	}
	sum, _, _ := recall.HashFile(filepath.Join(w.dir, "long.mp3"))
	parts, err := w.a.Store().Parts(context.Background(), sum, recording.Transcriber{})
	if err != nil || len(parts) != 3 {
		t.Fatalf("parts: %d, %v", len(parts), err)
	}
	billed := map[string]time.Duration{}
	for _, c := range w.sandbox.Charges() {
		billed[c.Tag] = c.Duration
	}
	const frame = 36 * time.Millisecond
	var lastEnd time.Duration
	for i, p := range parts {
		if p.Start%frame != 0 || p.Duration%frame != 0 {
			t.Errorf("chunk %d: %s from %s is not whole 36 ms frames", i, p.Duration, p.Start)
		}
		if i > 0 && p.Start != parts[i-1].Start+parts[i-1].Duration {
			t.Errorf("chunk %d starts at %s, the previous one ends at %s", i, p.Start, parts[i-1].Start+parts[i-1].Duration)
		}
		if got := billed[p.Key]; got != p.Duration {
			t.Errorf("chunk %d: planned %s, the provider measured %s", i, p.Duration, got)
		}
		for _, seg := range p.Segments {
			start, end := p.Start+seg.Start, p.Start+seg.End
			if start < lastEnd-time.Millisecond {
				t.Errorf("chunk %d: a cue starts at %s, before the previous one ends (%s): %s of overlap", i, start, lastEnd, lastEnd-start)
			}
			lastEnd = end
		}
	}
}

// TestEmptyChunkIsRefusedBeforeTheBoundary runs a content whose stored
// plan has a chunk of 0 s, as older versions planned from a proxy that a
// concurrent run was still writing: that chunk fails safely with a reason
// naming the file, nothing empty is uploaded, and the other chunk is sent.
func TestEmptyChunkIsRefusedBeforeTheBoundary(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"short.mp3": 3 * time.Second})
	sum, _, _ := recall.HashFile(filepath.Join(w.dir, "short.mp3"))
	_, err := w.a.Store().PlanChunks(context.Background(), []store.Chunk{
		{SHA256: sum, Transcriber: recording.Transcriber{Provider: "sandbox", Model: "whisper-1"}, Index: 0, Count: 2, Duration: 2 * time.Second},
		{SHA256: sum, Transcriber: recording.Transcriber{Provider: "sandbox", Model: "whisper-1"}, Index: 1, Count: 2, Start: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := w.run(recall.RunOptions{Provider: w.provider("sandbox")})
	if w.sandbox.Requests() != 1 || len(w.sandbox.Charges()) != 1 {
		t.Fatalf("%d requests, %d charges: want the one chunk with audio sent", w.sandbox.Requests(), len(w.sandbox.Charges()))
	}
	if rep.Failed != 1 || rep.Done != 0 {
		t.Fatalf("run: %+v", rep)
	}
	ops, _ := w.a.Operations(context.Background(), "b")
	var refused journal.Operation
	for _, op := range ops {
		if strings.Contains(op.Key, "/1/") {
			refused = op
		}
	}
	if refused.State != journal.FailedSafe || !strings.Contains(refused.LastError, "nothing to transcribe") {
		t.Fatalf("the empty chunk: %s, %q", refused.State, refused.LastError)
	}
}

// TestProblemsNameFiles changes a recording after it was added: the run
// cannot make its proxy, and says so under the file's path, not its hash.
func TestProblemsNameFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"changed.mp3": 2 * time.Second})
	path := filepath.Join(w.dir, "changed.mp3")
	os.WriteFile(path, []byte("not the recording that was added"), 0o644)
	rep := w.run(recall.RunOptions{})
	if len(rep.Problems) != 1 {
		t.Fatalf("problems: %+v", rep.Problems)
	}
	p := rep.Problems[0]
	if p.Path != path || !strings.Contains(p.Error, path) || p.State != recording.Failed {
		t.Fatalf("problem %+v: want it under %s, naming it", p, path)
	}
}
