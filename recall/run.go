package recall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/store"
)

// RunOptions configure Run.
type RunOptions struct {
	// Provider sends the paid requests, each through its one client and
	// within its timeout.
	Provider *provider.Provider
	// PricePerMinute in micro-dollars.
	PricePerMinute ledger.Amount
	// Budget caps what the batch may spend, held and settled together,
	// over all its runs; 0 means no cap.
	Budget ledger.Amount
	// Workers transcribe contents in parallel; default the number of CPUs.
	Workers int
	// Out, if set, receives .txt, .srt, .vtt and .json transcripts.
	Out string
	// CacheDir keeps audio proxies and chunks; default the user's cache
	// directory.
	CacheDir string
	// MaxChunkBytes lowers the provider's size limit per request.
	MaxChunkBytes int64
	// Worker names this process in leases and the audit log; default
	// host:pid.
	Worker string
	// Progress, if set, is told where each content stands as it moves
	// through the run: converting, each chunk sent, waited for and
	// answered, and the content finished. It is called from the workers,
	// at once, and must not block.
	Progress func(Progress)
}

// Stage is where a content stands in a run, as [Progress] reports it.
type Stage string

// The stages of a content in a run.
const (
	// StageConverting: ffmpeg makes the content's audio proxy.
	StageConverting Stage = "converting"
	// StageCutting: ffmpeg cuts a chunk from the proxy.
	StageCutting Stage = "cutting"
	// StageSending: the chunk's money is held and its request is being
	// written.
	StageSending Stage = "sending"
	// StageWaiting: the request is written; its answer has not come.
	StageWaiting Stage = "waiting for an answer"
	// StageAnswered: the chunk's outcome is recorded, in State.
	StageAnswered Stage = "answered"
	// StageFinished: the run is done with the content, as far as Outcome
	// says.
	StageFinished Stage = "finished"
)

// Progress reports a content's step in a run.
type Progress struct {
	// Path is the content's first file in the batch.
	Path   string
	SHA256 string
	Stage  Stage
	// Chunk (from 1) and Chunks say which chunk the stages from cutting to
	// answered are about; Duration is its audio, and Cost its price.
	Chunk, Chunks int
	Duration      time.Duration
	Cost          ledger.Amount
	// State is the chunk's outcome, when answered; Detail says more.
	State  journal.State
	Detail string
	// Outcome is how far the content got, when finished: done, ambiguous,
	// failed, paid_without_transcript or waiting (the run was interrupted,
	// or another run holds the content).
	Outcome string
}

// RunReport says how the batch stands after a run.
type RunReport struct {
	Batch string `json:"batch"`
	// Paid counts the requests this run sent that were applied.
	Paid int `json:"paid"`
	// Done counts the batch's contents with a complete transcript.
	Done int `json:"done"`
	// Ambiguous counts contents with a chunk whose outcome is unknown.
	Ambiguous int `json:"ambiguous"`
	// Failed counts contents that failed before being paid for; safe to
	// retry with retry-failed --safe-only.
	Failed int `json:"failed"`
	// Untranscribed counts contents paid for (a look-up at the provider
	// found the charge) whose transcript the provider did not keep.
	Untranscribed int `json:"paid_without_transcript"`
	// Waiting counts contents not yet transcribed, for example because the
	// run was interrupted.
	Waiting  int       `json:"waiting"`
	Problems []Problem `json:"problems"`
}

// run holds what every worker of one Run shares.
type run struct {
	a        *Archive
	opts     RunOptions
	batch    string
	sendCtx  context.Context // not canceled by an interrupt: a request in flight finishes
	mu       sync.Mutex
	paid     int
	problems []Problem
	names    map[string]string // each content's first path, for Progress
}

// Run transcribes batch: for each content not yet transcribed, it makes the
// audio proxy, cuts it to the provider's limits, and for each chunk holds
// the estimated cost, commits sending, makes one paid request, and records
// the answer. A request that may have been applied is never sent again.
// When ctx is canceled, no new chunk starts; the requests in flight finish.
func (a *Archive) Run(ctx context.Context, batch string, opts RunOptions) (RunReport, error) {
	opts, err := runDefaults(opts)
	if err != nil {
		return RunReport{}, err
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return RunReport{}, err
	}
	if err := a.store.SetBudget(ctx, batch, opts.Budget); err != nil {
		return RunReport{}, err
	}
	// Requests whose run died while sending them are ambiguous from now on.
	if err := a.store.Recover(ctx); err != nil {
		return RunReport{}, err
	}
	contents, err := a.store.Contents(ctx, batch)
	if err != nil {
		return RunReport{}, err
	}
	r := &run{a: a, opts: opts, batch: batch, sendCtx: context.WithoutCancel(ctx), names: map[string]string{}}
	next := make(chan string)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for sha := range next {
				r.content(ctx, sha)
			}
		})
	}
feed:
	for _, c := range contents {
		select {
		case next <- c.SHA256:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	rep, err := a.runReport(context.WithoutCancel(ctx), batch)
	rep.Paid = r.paid
	rep.Problems = append(rep.Problems, r.problems...)
	return rep, err
}

// runDefaults fills the options Run defaults, and makes its directories.
func runDefaults(opts RunOptions) (RunOptions, error) {
	if opts.Provider == nil {
		return opts, errors.New("recall: run needs a provider")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Worker == "" {
		opts.Worker = journal.ProcessWorker()
	}
	if opts.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return opts, fmt.Errorf("recall: no cache directory for audio proxies: %w", err)
		}
		opts.CacheDir = filepath.Join(dir, "recall-archive")
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return opts, fmt.Errorf("recall: cache directory: %w", err)
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return opts, fmt.Errorf("recall: output directory: %w", err)
		}
	}
	return opts, nil
}

// problem notes a problem with a content, under the content's first path
// in the batch.
func (r *run) problem(p Problem) {
	if paths, err := r.a.store.AddedPaths(context.Background(), r.batch, p.Path); err == nil && len(paths) > 0 {
		p.Path = paths[0]
	}
	r.mu.Lock()
	r.problems = append(r.problems, p)
	r.mu.Unlock()
}

// content transcribes one content's chunks.
func (r *run) content(ctx context.Context, sha string) {
	chunks, err := r.chunks(ctx, sha)
	if err != nil {
		r.fail(ctx, sha, "proxy", err)
		r.emit(Progress{SHA256: sha, Stage: StageFinished, Outcome: string(store.FailedSafely), Detail: err.Error()})
		return
	}
	states := make([]journal.State, len(chunks))
	for i, c := range chunks {
		if ctx.Err() != nil {
			break
		}
		states[i] = r.chunk(ctx, c)
	}
	r.emit(Progress{SHA256: sha, Stage: StageFinished, Chunks: len(chunks), Outcome: outcome(states)})
	if r.opts.Out != "" {
		if err := r.a.writeOutputs(ctx, r.batch, sha, r.opts.Out); err != nil && !errors.Is(err, errIncomplete) {
			r.problem(Problem{Path: sha, State: StateFailed, Phase: "output", Error: err.Error()})
		}
	}
}

// outcome is how far a content got, from its chunks' states after a run,
// as the store's progress says it: a chunk in flight for another run
// leaves the content waiting.
func outcome(states []journal.State) string {
	var ambiguous, failed, waiting bool
	for _, s := range states {
		switch s {
		case journal.Applied:
		case journal.Ambiguous:
			ambiguous = true
		case journal.FailedSafe, journal.NotApplied:
			failed = true
		default:
			waiting = true
		}
	}
	switch {
	case ambiguous:
		return string(store.Ambiguous)
	case failed:
		return string(store.FailedSafely)
	case waiting:
		return string(store.Waiting)
	}
	return string(store.Done)
}

// emit tells opts.Progress of p, naming the content by its first path in
// the batch.
func (r *run) emit(p Progress) {
	if r.opts.Progress == nil {
		return
	}
	r.mu.Lock()
	name, ok := r.names[p.SHA256]
	r.mu.Unlock()
	if !ok {
		name = p.SHA256
		if paths, err := r.a.store.AddedPaths(context.Background(), r.batch, p.SHA256); err == nil && len(paths) > 0 {
			name = paths[0]
		}
		r.mu.Lock()
		r.names[p.SHA256] = name
		r.mu.Unlock()
	}
	p.Path = name
	r.opts.Progress(p)
}

// chunks returns the content's chunks, planning them (and the journal
// operations that pay for them) on the first run.
func (r *run) chunks(ctx context.Context, sha string) ([]store.Chunk, error) {
	chunks, err := r.a.store.Chunks(ctx, sha)
	if err != nil || len(chunks) > 0 {
		return chunks, err
	}
	proxy, err := r.proxy(ctx, sha)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(proxy)
	if err != nil {
		return nil, err
	}
	return r.a.store.PlanChunks(ctx, r.cut(sha, st.Size()))
}

// cut plans the chunks of a content whose proxy has size bytes, within the
// provider's limits.
func (r *run) cut(sha string, size int64) []store.Chunk {
	// The proxy is constant-bitrate MP3: its size gives its length, as the
	// provider will measure it, without another ffprobe.
	duration := time.Duration(size) * time.Second / media.ProxyBytesPerSecond
	limits := r.opts.Provider.Limits()
	maxBytes := limits.MaxBytes
	if r.opts.MaxChunkBytes > 0 && (maxBytes == 0 || r.opts.MaxChunkBytes < maxBytes) {
		maxBytes = r.opts.MaxChunkBytes
	}
	n := 1
	if maxBytes > 0 {
		// A margin of 5 % for frames that straddle a cut.
		n = max(n, int((size*105/100+maxBytes-1)/maxBytes))
	}
	if limits.MaxDuration > 0 {
		n = max(n, int((duration+limits.MaxDuration-1)/limits.MaxDuration))
	}
	each := (duration + time.Duration(n) - 1) / time.Duration(n)
	chunks := make([]store.Chunk, n)
	for i := range chunks {
		start := time.Duration(i) * each
		chunks[i] = store.Chunk{SHA256: sha, Index: i, Count: n, Start: start, Duration: min(each, duration-start)}
	}
	return chunks
}

// proxy returns the path of the content's audio proxy, making it if the
// cache lacks it. The cache is keyed by content, recipe and ffmpeg version.
func (r *run) proxy(ctx context.Context, sha string) (string, error) {
	version, err := r.a.tools.Version(ctx)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(r.opts.CacheDir, fmt.Sprintf("%s.%s.%s.mp3", sha, media.ProxyRecipe, shortHash(version)))
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	src, err := r.source(ctx, sha)
	if err != nil {
		return "", err
	}
	r.emit(Progress{SHA256: sha, Stage: StageConverting})
	if err := r.a.tools.Proxy(ctx, src, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// source returns a readable path of the content's file in any batch.
func (r *run) source(ctx context.Context, sha string) (string, error) {
	paths, err := r.a.store.SourcePaths(ctx, sha)
	if err != nil {
		return "", err
	}
	for _, p := range paths {
		if sum, _, err := HashFile(p); err == nil && sum == sha {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of the %d paths recorded for content %s still holds it: add the file again", len(paths), sha[:12])
}

// chunkFile returns the audio of one chunk, cut from the proxy when the
// content has several.
func (r *run) chunkFile(ctx context.Context, c store.Chunk) (string, int64, error) {
	proxy, err := r.proxy(ctx, c.SHA256)
	if err != nil {
		return "", 0, err
	}
	path := proxy
	if c.Count > 1 {
		path = fmt.Sprintf("%s.%dof%d.mp3", proxy[:len(proxy)-len(".mp3")], c.Index+1, c.Count)
		if _, err := os.Stat(path); err != nil {
			r.emit(Progress{SHA256: c.SHA256, Stage: StageCutting, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration})
			if err := r.a.tools.Cut(ctx, proxy, path, c.Start, c.Duration); err != nil {
				return "", 0, err
			}
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return path, st.Size(), nil
}

// chunk sends one chunk, if it still needs sending, and returns its state
// after: pending if it was not sent (another worker holds it).
func (r *run) chunk(ctx context.Context, c store.Chunk) journal.State {
	op, err := r.a.store.Operation(ctx, c.Key)
	if err != nil {
		r.problem(Problem{Path: c.SHA256, State: StateFailed, Phase: "journal", Error: err.Error()})
		return journal.Pending
	}
	if op.State != journal.Pending {
		return op.State // done, ambiguous, in flight, or failed: not ours to send
	}
	release, err := r.a.store.Claim(ctx, c.Key, r.opts.Worker)
	if err != nil {
		return journal.Pending // another worker holds it
	}
	defer release()

	path, size, err := r.chunkFile(ctx, c)
	if err != nil {
		return r.record(ctx, c, journal.Report{Worker: r.opts.Worker, To: journal.FailedSafe, Phase: "not_sent", Detail: "audio proxy: " + err.Error()}, nil)
	}
	cost := r.price(c.Duration)
	if err := r.a.store.Send(ctx, r.batch, c.Key, r.opts.Worker, cost); err != nil {
		detail := err.Error()
		if errors.Is(err, ledger.ErrInsufficientFunds) {
			detail = "budget: " + detail
		}
		return r.record(ctx, c, journal.Report{Worker: r.opts.Worker, To: journal.FailedSafe, Phase: "not_sent", Detail: detail}, nil)
	}

	// The boundary: from here on, a failure may have been paid for; the
	// provider's client never sends what was sent again.
	note := func(ev journal.Evidence) error {
		return r.a.store.Annotate(context.WithoutCancel(ctx), c.Key, r.opts.Worker, ev)
	}
	step := Progress{SHA256: c.SHA256, Stage: StageSending, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration, Cost: cost}
	r.emit(step)
	sendCtx := r.sendCtx
	if r.opts.Progress != nil {
		// Once a request is written, the wait is the provider's.
		step.Stage = StageWaiting
		sendCtx = httptrace.WithClientTrace(sendCtx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { r.emit(step) }})
	}
	prov := r.opts.Provider
	t, err := prov.Transcribe(sendCtx, provider.Chunk{Key: c.Key, Path: path, Size: size, Duration: c.Duration, Note: note})
	rep := provider.Report(r.opts.Worker, err)
	if err != nil {
		return r.record(ctx, c, rep, nil)
	}
	rep.Evidence = journal.Evidence{"provider_request_id": t.RequestID, "provider": prov.Name(), "model": prov.Model()}
	return r.record(ctx, c, rep, &store.Transcript{Transcript: t, Provider: prov.Name(), Model: prov.Model(), Cost: cost})
}

// record stores a chunk's outcome, with its transcript and money, and
// returns the chunk's state.
func (r *run) record(ctx context.Context, c store.Chunk, rep journal.Report, t *store.Transcript) journal.State {
	if err := r.a.store.Record(ctx, c, rep, t); err != nil {
		r.problem(Problem{Path: c.SHA256, State: StateFailed, Phase: "record", Error: err.Error()})
		return journal.Pending
	}
	if rep.To == journal.Applied {
		r.mu.Lock()
		r.paid++
		r.mu.Unlock()
	}
	r.emit(Progress{SHA256: c.SHA256, Stage: StageAnswered, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration,
		Cost: r.price(c.Duration), State: rep.To, Detail: rep.Detail})
	return rep.To
}

// price is the cost of d, billed per started second.
func (r *run) price(d time.Duration) ledger.Amount { return priceOf(d, r.opts.PricePerMinute) }

// priceOf is the cost of d at perMinute, billed per started second.
func priceOf(d time.Duration, perMinute ledger.Amount) ledger.Amount {
	secs := int64((d + time.Second - 1) / time.Second)
	return ledger.Amount((secs*int64(perMinute) + 59) / 60)
}

// fail marks the batch's files of a content as failed before any payment.
func (r *run) fail(ctx context.Context, sha, phase string, cause error) {
	if err := r.a.store.FailContent(context.WithoutCancel(ctx), r.batch, sha, phase, cause.Error()); err != nil {
		cause = errors.Join(cause, err)
	}
	r.problem(Problem{Path: sha, State: StateFailed, Phase: phase, Error: cause.Error()})
}

// runReport counts the batch's contents by how far they got.
func (a *Archive) runReport(ctx context.Context, batch string) (RunReport, error) {
	rep := RunReport{Batch: batch, Problems: []Problem{}}
	progress, err := a.store.Progress(ctx, batch)
	if err != nil {
		return rep, err
	}
	for _, p := range progress {
		switch p {
		case store.Done:
			rep.Done++
		case store.Ambiguous:
			rep.Ambiguous++
		case store.FailedSafely:
			rep.Failed++
		case store.Untranscribed:
			rep.Untranscribed++
		default:
			rep.Waiting++
		}
	}
	return rep, nil
}

// shortHash abbreviates s for a file name.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
