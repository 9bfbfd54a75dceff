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
	"strings"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// RunOptions configure Run.
type RunOptions struct {
	// Provider sends the paid requests, each through its one client and
	// within its timeout.
	Provider *provider.Provider
	// PricePerMinute in micro-dollars.
	PricePerMinute ledger.Amount
	// Billing is how the provider rounds each request: what each chunk's
	// hold and cost are rounded to (zero: per started second).
	Billing Billing
	// Options are what the options the provider's settings ask for cost
	// on top of PricePerMinute, each rounded as Billing says, as
	// Pricing.Options prices them.
	Options []OptionPrice
	// Again transcribes again, with the provider's model and settings,
	// the contents that another provider, model or settings transcribed
	// or paid for: what retranscribe asks for, once the cost is agreed.
	// Without it such a content is not sent, and the report counts it in
	// OtherSettings; but by the sandbox, whose play money costs nothing.
	Again bool
	// Budget, if not 0, is the cap the batch must have on what it spends,
	// held and settled together, over all its runs: it is set on a batch
	// without one, and a batch with another is refused with an error
	// wrapping ErrBudgetConflict (Archive.SetBudget changes it). 0 keeps
	// the batch's budget, whatever it is.
	Budget ledger.Amount
	// User is who runs the batch, recorded with a budget the run sets.
	User string
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
	// journal.ProcessWorker(), unique to the process.
	Worker string
	// Outbox is the directory that keeps the answers of requests that were
	// sent until the database has recorded them (see outbox.go); default
	// "outbox" in CacheDir, under the archive's name.
	Outbox string
	// pause, if set, is called at the named points of a chunk's request
	// (see export_test.go): the tests freeze a worker there, after
	// stopping its renewals with stop.
	pause func(point, key string, stop func())
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
	// While converting, Duration is the recording's audio and Converted
	// how much of it ffmpeg has converted.
	Chunk, Chunks int
	Duration      time.Duration
	Converted     time.Duration
	Cost          ledger.Amount
	// State is the chunk's outcome, when answered; Detail says more.
	State  journal.State
	Detail string
	// Outcome is how far the content got, when finished: done, ambiguous,
	// failed, paid_without_transcript, sending (a request of it is in
	// flight for another run, or a killed run's until its lease ends) or
	// waiting (the run was interrupted, or another run holds the content).
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
	// Refused counts contents the batch's budget could not pay for; not
	// failures: a run after the budget is raised sends them. Refusals says
	// which, with what they need.
	Refused  int       `json:"refused_by_budget"`
	Refusals []Refusal `json:"refusals"`
	// Waiting counts contents not yet transcribed, for example because the
	// run was interrupted.
	Waiting int `json:"waiting"`
	// InFlight counts contents with a request in flight: another run's,
	// or a killed run's until its lease ends (then it is ambiguous).
	InFlight int `json:"in_flight"`
	// OtherSettings counts contents not sent because another provider,
	// model or settings transcribed them, or paid for them: a run does
	// not pay for a second transcript by accident (RunOptions.Again
	// does, for retranscribe). Others says which, and by whom.
	OtherSettings int       `json:"transcribed_with_other_settings"`
	Others        []Other   `json:"other_settings"`
	Problems      []Problem `json:"problems"`
	// Notes say what went wrong and was made good: renewals of a lease
	// that failed and were tried again, records tried again, answers
	// recorded from the outbox.
	Notes []string `json:"notes"`
	// KeyRefused, if set, is the provider's refusal of the API key (401
	// or 403) that ended the run: no chunk was sent after it.
	KeyRefused string `json:"key_refused,omitempty"`
	// Earlier are the batch's files that failed before this run (when
	// added, or in an earlier run), safe to retry with retry-failed.
	Earlier []Problem `json:"earlier_failures"`
}

// Other is a content of the batch that a run did not send because
// another transcriber made, or paid for, its transcript.
type Other struct {
	// Path is the content's first file in the batch.
	Path string `json:"path"`
	// By made the transcript kept: the latest, when there are several.
	By recording.Transcriber `json:"transcribed_by"`
}

// OutcomeOtherSettings is Progress.Outcome for a content that a run did
// not send because another transcriber made its transcript.
const OutcomeOtherSettings = "transcribed_with_other_settings"

// otherSettings is why a content's chunks were not planned: by made, or
// paid for, its transcript, and the run does not transcribe it again.
type otherSettings struct{ by recording.Transcriber }

func (e *otherSettings) Error() string {
	return "transcribed with other settings (" + e.by.Described() + ")"
}

// run holds what every worker of one Run shares.
type run struct {
	a       *Archive
	opts    RunOptions
	batch   string
	who     recording.Transcriber // the provider and model that transcribe
	sendCtx context.Context       // not canceled by an interrupt: a request in flight finishes
	outbox  *outbox
	// stop ends the run early: the provider refused the key (refusal),
	// or, with a cause that Run returns, a failure that no content
	// survives, such as a write-ahead log replaced.
	stop     context.CancelCauseFunc
	mu       sync.Mutex
	paid     int
	problems []Problem
	notes    []string
	refusal  string            // the provider's refusal of the key, which stopped the run
	names    map[string]string // each content's first path, for Progress
	others   []Other           // contents another transcriber made, not sent
	act      *activity         // what the workers are doing, for the console
}

// Run transcribes batch: for each content not yet transcribed, it makes the
// audio proxy, cuts it to the provider's limits, and for each chunk holds
// the estimated cost, commits sending, makes one paid request, and records
// the answer. A request that may have been applied is never sent again.
// When ctx is canceled, no new chunk starts; the requests in flight finish.
func (a *Archive) Run(ctx context.Context, batch string, opts RunOptions) (RunReport, error) {
	opts, err := a.runDefaults(opts)
	if err != nil {
		return RunReport{}, err
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return RunReport{}, err
	}
	if err := a.keepBudget(ctx, batch, opts.Budget, opts.User); err != nil {
		return RunReport{}, err
	}
	// Requests whose run died while sending them are ambiguous from now on.
	if err := a.store.Recover(ctx); err != nil {
		return RunReport{}, err
	}
	box, err := openOutbox(opts.Outbox)
	if err != nil {
		return RunReport{}, err
	}
	outer := ctx
	// Also ended by a refused key, and by a failure no content survives.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	who := recording.Transcriber{Provider: opts.Provider.Name(), Model: opts.Provider.Model(), Settings: opts.Provider.Settings()}
	r := &run{a: a, opts: opts, batch: batch, who: who, sendCtx: context.WithoutCancel(ctx), names: map[string]string{}, outbox: box, stop: stop}
	// What an earlier run could not record is recorded first.
	r.recordKept(ctx)
	contents, err := a.store.Contents(ctx, batch)
	if err != nil {
		return RunReport{}, err
	}
	q := &queue{}
	for _, c := range contents {
		q.todo = append(q.todo, queued{sha: c.SHA256})
	}
	r.act = newActivity(a.store, opts.Worker, "run", batch)
	r.act.path = r.firstPath
	r.act.start()
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				item, ok := q.next()
				if !ok {
					return
				}
				// A content whose proxy another worker is making is
				// skipped once, for the others; the second time, it waits.
				if busy := r.content(ctx, item.sha, item.skipped); busy {
					q.later(item.sha)
				}
			}
		})
	}
	wg.Wait()
	r.act.end()

	rep, err := a.runReport(context.WithoutCancel(outer), batch, who)
	for try := 1; store.Passing(err) && try < recordTries; try++ {
		// The database may be restarting: the report waits for it a while.
		time.Sleep(recordPause)
		rep, err = a.runReport(context.WithoutCancel(outer), batch, who)
	}
	if err != nil {
		err = fmt.Errorf("counting the batch's recordings after the run (%s): %w", words(err), err)
	}
	rep.Paid = r.paid
	// Not sent, these are not waiting for this run's settings either.
	rep.OtherSettings, rep.Others = len(r.others), append([]Other{}, r.others...)
	rep.Waiting = max(0, rep.Waiting-len(r.others))
	rep.Problems = append(rep.Problems, r.problems...)
	rep.Notes = append(rep.Notes, r.notes...)
	rep.KeyRefused = r.refusal
	if err == nil {
		rep.Earlier, err = a.earlier(context.WithoutCancel(outer), batch, rep.Problems)
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return rep, cause
	}
	return rep, err
}

// runDefaults fills the options Run defaults, and makes its directories.
func (a *Archive) runDefaults(opts RunOptions) (RunOptions, error) {
	if opts.Provider == nil {
		return opts, errors.New("run needs a provider")
	}
	if t, lease := opts.Provider.Timeout(), a.store.SendLease(); t > lease-lease/100 {
		return opts, fmt.Errorf("the provider's timeout (%s) outlives the lease a request is sent under (%s): a request must be over before its lease runs out; open the archive with a longer lease (Options.SendLease), or give the provider a shorter timeout", t, lease)
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Worker == "" {
		opts.Worker = journal.ProcessWorker()
	}
	if opts.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return opts, fmt.Errorf("no cache directory for audio proxies: %w", err)
		}
		opts.CacheDir = dir
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return opts, fmt.Errorf("cannot make the cache directory: %w", err)
	}
	if opts.Outbox == "" {
		opts.Outbox = filepath.Join(opts.CacheDir, "outbox")
	}
	// One directory per archive: what one keeps is recorded in it only.
	opts.Outbox = filepath.Join(opts.Outbox, a.store.ID())
	// What killed runs were writing is of no use: their partial files go,
	// those that other runs are writing stay.
	if _, err := media.CleanPartials(opts.CacheDir); err != nil {
		return opts, fmt.Errorf("cleaning the cache directory %s: %w", opts.CacheDir, err)
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return opts, fmt.Errorf("cannot make the output directory: %w", err)
		}
	}
	return opts, nil
}

// queue holds the contents a run has still to take, in order.
type queue struct {
	mu   sync.Mutex
	todo []queued
}

type queued struct {
	sha string
	// skipped: the content was put back once because another worker was
	// making its proxy.
	skipped bool
}

func (q *queue) next() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.todo) == 0 {
		return queued{}, false
	}
	item := q.todo[0]
	q.todo = q.todo[1:]
	return item, true
}

// later puts sha back at the end of the queue.
func (q *queue) later(sha string) {
	q.mu.Lock()
	q.todo = append(q.todo, queued{sha: sha, skipped: true})
	q.mu.Unlock()
}

// problem notes a problem with a content, under the content's first path
// in the batch.
func (r *run) problem(p Problem) {
	if paths, err := r.a.store.Paths(context.Background(), r.batch, p.Path); err == nil && len(paths) > 0 {
		p.Path = paths[0]
	}
	r.mu.Lock()
	r.problems = append(r.problems, p)
	r.mu.Unlock()
}

// content transcribes one content's chunks. It reports busy, having done
// nothing, when the content's chunks are not planned and another worker is
// making its proxy, unless wait is set.
func (r *run) content(ctx context.Context, sha string, wait bool) (busy bool) {
	chunks, err := r.chunks(ctx, sha, wait)
	var other *otherSettings
	switch {
	case errors.Is(err, media.ErrBusy):
		return true
	case errors.As(err, &other):
		kept := Other{Path: r.name(sha), By: other.by}
		r.mu.Lock()
		r.others = append(r.others, kept)
		r.mu.Unlock()
		r.emit(Progress{SHA256: sha, Stage: StageFinished, Outcome: OutcomeOtherSettings, Detail: err.Error() + ": not sent"})
		return false
	case errors.As(err, new(*storeError)):
		// The database, not the recording: the content waits for the next run.
		r.dbProblem(sha, "database", err)
		return false
	case err != nil && ctx.Err() != nil:
		// Interrupted: ffmpeg was stopped, and the content waits for the
		// next run; it did not fail.
		r.emit(Progress{SHA256: sha, Stage: StageFinished, Outcome: string(recording.Waiting)})
		return false
	case err != nil:
		r.fail(ctx, sha, "proxy", err)
		r.emit(Progress{SHA256: sha, Stage: StageFinished, Outcome: string(recording.FailedSafely), Detail: err.Error()})
		return false
	}
	states := make([]journal.State, len(chunks))
	for i, c := range chunks {
		if ctx.Err() != nil {
			break
		}
		state, refused := r.chunk(ctx, c)
		states[i] = state
		if refused {
			// The content's other chunks would be paid for in vain.
			r.emit(Progress{SHA256: sha, Stage: StageFinished, Chunks: len(chunks), Outcome: string(recording.RefusedByBudget)})
			return false
		}
	}
	r.emit(Progress{SHA256: sha, Stage: StageFinished, Chunks: len(chunks), Outcome: outcome(states)})
	if r.opts.Out != "" {
		if err := r.a.writeOutputs(ctx, r.batch, sha, r.who, r.opts.Out); err != nil && !errors.Is(err, errIncomplete) {
			r.problem(Problem{Path: sha, State: recording.Failed, Phase: "output", Error: err.Error()})
		}
	}
	return false
}

// outcome is how far a content got, from its chunks' states after a run,
// as the store's progress says it: a chunk in flight for another run
// leaves the content waiting.
func outcome(states []journal.State) string {
	var ambiguous, failed, waiting, inFlight bool
	for _, s := range states {
		switch s {
		case journal.Applied:
		case journal.Sending:
			inFlight = true
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
		return string(recording.Ambiguous)
	case inFlight:
		return string(recording.Sending)
	case failed:
		return string(recording.FailedSafely)
	case waiting:
		return string(recording.Waiting)
	}
	return string(recording.Done)
}

// emit keeps p as the content's activity, and tells opts.Progress of it,
// naming the content by its first path in the batch.
func (r *run) emit(p Progress) {
	if r.act != nil {
		r.act.step(p)
	}
	if r.opts.Progress == nil {
		return
	}
	p.Path = r.name(p.SHA256)
	r.opts.Progress(p)
}

// name is the content's first path in the batch, for messages and
// progress, or its hash when it has none.
func (r *run) name(sha string) string {
	if p := r.firstPath(sha); p != "" {
		return p
	}
	return sha
}

// firstPath returns the content's first path in the batch, looked up
// once; "" when it has none.
func (r *run) firstPath(sha string) string {
	r.mu.Lock()
	name, ok := r.names[sha]
	r.mu.Unlock()
	if !ok {
		if paths, err := r.a.store.AddedPaths(context.Background(), r.batch, sha); err == nil && len(paths) > 0 {
			name = paths[0]
		}
		r.mu.Lock()
		r.names[sha] = name
		r.mu.Unlock()
	}
	return name
}

// storeError is a failure of the database while planning a content, told
// apart from one of the recording.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// storeErr wraps a failure of the database as a storeError.
func storeErr(err error) error {
	if err == nil {
		return nil
	}
	return &storeError{err}
}

// chunks returns the content's chunks for the run's provider and model,
// planning them (and the journal operations that pay for them) on the
// first run with them. Unless wait is set, it returns an error wrapping
// media.ErrBusy when the chunks are not planned and another worker is
// making the proxy. Failures of the database are storeErrors.
func (r *run) chunks(ctx context.Context, sha string, wait bool) ([]store.Chunk, error) {
	chunks, err := r.a.store.Chunks(ctx, sha, r.who)
	if err != nil || len(chunks) > 0 {
		return chunks, storeErr(err)
	}
	if !r.opts.Again && r.who.Provider != recording.Sandbox {
		// A transcript made otherwise is kept: a second one is paid for
		// on purpose only. The sandbox's play money pays for nothing.
		others, err := r.a.store.Others(ctx, sha, r.who)
		if err != nil {
			return nil, storeErr(err)
		}
		if len(others) > 0 {
			return nil, &otherSettings{by: others[0]}
		}
	}
	proxy, err := r.proxy(ctx, sha, wait)
	if err != nil {
		return nil, err
	}
	frames, err := media.ReadFrames(proxy)
	if err != nil {
		return nil, err
	}
	plan, err := cut(sha, frames, r.opts.Provider.Limits(), r.opts.MaxChunkBytes)
	if err != nil {
		return nil, err
	}
	for i := range plan {
		plan[i].Transcriber = r.who
	}
	chunks, err = r.a.store.PlanChunks(ctx, plan)
	return chunks, storeErr(err)
}

// cut plans the chunks of a content whose proxy has frames, within the
// provider's limits and maxChunkBytes, if not 0, in whole frames: each
// chunk lasts exactly what the provider will measure, and the next starts
// where it ends.
func cut(sha string, frames media.Frames, limits provider.Limits, maxChunkBytes int64) ([]store.Chunk, error) {
	count := frames.Count()
	if count == 0 || frames.Each <= 0 {
		return nil, errors.New("its audio proxy holds no audio (0 frames): there is nothing to transcribe")
	}
	size := frames.Offsets[count]
	duration := frames.Duration()
	maxBytes := limits.MaxBytes
	if maxChunkBytes > 0 && (maxBytes == 0 || maxChunkBytes < maxBytes) {
		maxBytes = maxChunkBytes
	}
	n := 1
	if maxBytes > 0 {
		// A margin of 5 % for frames that straddle a cut.
		n = max(n, int((size*105/100+maxBytes-1)/maxBytes))
	}
	if limits.MaxDuration > 0 {
		n = max(n, int((duration+limits.MaxDuration-1)/limits.MaxDuration))
	}
	n = min(n, count)
	each := (count + n - 1) / n // frames per chunk
	n = (count + each - 1) / each
	chunks := make([]store.Chunk, n)
	for i := range chunks {
		first := i * each
		chunks[i] = store.Chunk{SHA256: sha, Index: i, Count: n,
			Start: time.Duration(first) * frames.Each, Duration: time.Duration(min(each, count-first)) * frames.Each}
	}
	return chunks, nil
}

// proxy returns the path of the content's audio proxy, making it if the
// cache lacks it. The cache is keyed by content, recipe and ffmpeg version.
// When another worker is making it, proxy waits if wait is set, and
// otherwise returns an error wrapping media.ErrBusy.
func (r *run) proxy(ctx context.Context, sha string, wait bool) (string, error) {
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
	build := r.a.tools.TryProxy
	if wait {
		build = r.a.tools.Proxy
	}
	ctx = r.notices(ctx, sha, StageConverting)
	var length time.Duration
	if c, ok, err := r.a.store.Content(ctx, sha); err == nil && ok {
		length = c.Duration
	}
	ctx = media.WithConverted(ctx, func(done time.Duration) {
		r.emit(Progress{SHA256: sha, Stage: StageConverting, Duration: length, Converted: min(done, length)})
	})
	r.emit(Progress{SHA256: sha, Stage: StageConverting, Duration: length})
	if err := build(ctx, src, dst); err != nil {
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
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("this recording was recorded by the relative path %s, by an earlier version, and it is not there from %s: run 'recall-archive add' again from the directory it was added from, or with its absolute path", p, cwd())
		}
	}
	return "", fmt.Errorf("none of the paths recorded for this recording (%s) still holds it: the file was changed or moved; add it again", strings.Join(paths, ", "))
}

// cwd is the working directory, for messages.
func cwd() string {
	d, _ := os.Getwd()
	return d
}

// chunkFile returns the audio of one chunk, cut from the proxy when the
// content has several.
func (r *run) chunkFile(ctx context.Context, c store.Chunk) (string, int64, error) {
	proxy, err := r.proxy(ctx, c.SHA256, true)
	if err != nil {
		return "", 0, err
	}
	path := proxy
	if c.Count > 1 {
		path = fmt.Sprintf("%s.%dof%d.mp3", proxy[:len(proxy)-len(".mp3")], c.Index+1, c.Count)
		if _, err := os.Stat(path); err != nil {
			r.emit(Progress{SHA256: c.SHA256, Stage: StageCutting, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration})
			if err := r.a.tools.Cut(r.notices(ctx, c.SHA256, StageCutting), proxy, path, c.Start, c.Duration); err != nil {
				return "", 0, err
			}
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	if st.Size() == 0 {
		return "", 0, fmt.Errorf("chunk %d of %d is an empty file (%s): remove it and run again", c.Index+1, c.Count, path)
	}
	return path, st.Size(), nil
}

// chunk sends one chunk, if it still needs sending, and returns its state
// after: pending if it was not sent (another worker holds it, its lease
// was lost, or the batch's budget refused it: then refused is set).
func (r *run) chunk(ctx context.Context, c store.Chunk) (state journal.State, refused bool) {
	op, err := r.a.store.Operation(ctx, c.Key)
	if err != nil {
		r.dbProblem(c.SHA256, "journal", err)
		return journal.Pending, false
	}
	if op.State != journal.Pending {
		return op.State, false // done, ambiguous, in flight, or failed: not ours to send
	}
	held, release, err := r.a.store.Claim(ctx, c.Key, r.opts.Worker)
	if err != nil {
		if !errors.Is(err, journal.ErrLeaseLost) && !errors.Is(err, journal.ErrIllegalTransition) {
			r.dbProblem(c.SHA256, "claim", err)
		}
		return journal.Pending, false // another worker holds it, or has sent it
	}
	keeping := sync.OnceValue(release)
	defer func() { r.renewed(c, keeping()) }()
	pause := func(point string) {
		if r.opts.pause != nil {
			r.opts.pause(point, c.Key, func() { keeping() })
		}
	}
	pause("claimed")
	// The work before the request stops when the run is interrupted, or
	// when the lease is lost.
	prep, endPrep := context.WithCancelCause(held)
	defer endPrep(nil)
	defer context.AfterFunc(ctx, func() { endPrep(context.Cause(ctx)) })()

	if c.Duration <= 0 {
		// A plan made by an older version from a proxy cut short: sending
		// it would pay for nothing.
		return r.record(ctx, c, journal.Report{Worker: r.opts.Worker, To: journal.FailedSafe, Phase: "not_sent",
			Detail: fmt.Sprintf("plan: chunk %d of %d lasts %s: nothing to transcribe", c.Index+1, c.Count, c.Duration)}, nil), false
	}
	path, size, err := r.chunkFile(prep, c)
	if held.Err() != nil {
		return r.leaseLost(c, held), false
	}
	if err != nil {
		return r.record(ctx, c, journal.Report{Worker: r.opts.Worker, To: journal.FailedSafe, Phase: "not_sent", Detail: "audio proxy: " + err.Error()}, nil), false
	}
	cost := r.price(c.Duration)
	sent, err := r.a.store.Send(ctx, r.batch, c.Key, r.opts.Worker, cost)
	if err != nil {
		var short *ledger.InsufficientError
		switch {
		case errors.As(err, &short):
			r.refuse(ctx, c, cost, cost-max(short.Available, 0))
			return journal.Pending, true
		case errors.Is(err, store.ErrLogReplaced):
			r.fatal(err)
			return journal.Pending, false
		case errors.Is(err, journal.ErrLeaseLost):
			return r.leaseLost(c, held), false
		}
		return r.record(ctx, c, journal.Report{Worker: r.opts.Worker, To: journal.FailedSafe, Phase: "not_sent", Detail: err.Error()}, nil), false
	}

	// The boundary: from here on, a failure may have been paid for; the
	// provider's client never sends what was sent again, and never starts
	// it once the lease it was committed under is over (the fence).
	note := func(ev journal.Evidence) error {
		return r.a.store.Annotate(context.WithoutCancel(ctx), c.Key, r.opts.Worker, ev)
	}
	step := Progress{SHA256: c.SHA256, Stage: StageSending, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration, Cost: cost}
	r.emit(step)
	pause("sent")
	sendCtx, cancel := sent.Fence(r.sendCtx)
	defer cancel()
	// The provider's timeout counts from the sending commit: a pause
	// before the request starts is the request's time too.
	sendCtx, cancelTimeout := context.WithTimeout(sendCtx, r.opts.Provider.Timeout())
	defer cancelTimeout()
	// Once a request is written, the wait is the provider's.
	waiting := step
	waiting.Stage = StageWaiting
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { r.emit(waiting) }}
	if r.opts.pause != nil {
		trace.GotConn = func(httptrace.GotConnInfo) { pause("connected") }
	}
	sendCtx = httptrace.WithClientTrace(sendCtx, trace)
	prov := r.opts.Provider
	t, err := prov.Transcribe(sendCtx, provider.Chunk{Key: c.Key, Path: path, Size: size, Duration: c.Duration, Note: note})
	pause("answered")
	rep := provider.Report(r.opts.Worker, err)
	rep.Attempt, rep.Instance = sent.Attempts, sent.Instance
	var fence *journal.FenceError
	if err != nil && errors.As(context.Cause(sendCtx), &fence) {
		rep.Detail = "the lease it was sent under ran out before it was over: " + rep.Detail
	}
	if he, refused := provider.KeyRefused(err); refused {
		r.refused(he)
	}
	if err != nil {
		return r.settle(ctx, c, rep, nil), false
	}
	rep.Evidence = journal.Evidence{"provider_request_id": t.RequestID, "provider": prov.Name(), "model": prov.Model()}
	return r.settle(ctx, c, rep, &store.Transcript{Transcript: t, Provider: prov.Name(), Model: prov.Model(), Cost: cost}), false
}

// leaseLost notes that the chunk c was not sent because its lease was
// lost (held's cause says how), and returns its state: pending, for the
// next run.
func (r *run) leaseLost(c store.Chunk, held context.Context) journal.State {
	r.problem(Problem{Path: c.SHA256, State: string(recording.Waiting), Phase: "lease",
		Error: fmt.Sprintf("chunk %d of %d was not sent: %v; it is sent by the next run, or by whichever run holds it now", c.Index+1, c.Count, context.Cause(held))})
	return journal.Pending
}

// renewed notes renewals of the chunk's lease that failed, from the
// error its keeper ended with: retried in time, a note; lost, the
// chunk's problem was noted where it was found.
func (r *run) renewed(c store.Chunk, err error) {
	var re *journal.RenewError
	if errors.As(err, &re) && !re.Lost {
		r.note(fmt.Sprintf("%s: %v", r.name(c.SHA256), err))
	}
}

// notices returns ctx with the notices of a writer that waits for another
// one, told to the display and kept for the report's notes.
func (r *run) notices(ctx context.Context, sha string, stage Stage) context.Context {
	return media.WithNotices(ctx, func(n string) {
		r.note(r.name(sha) + ": " + n)
		r.emit(Progress{SHA256: sha, Stage: stage, Detail: n})
	})
}

// fatal stops the run: err leaves no content that could go on.
func (r *run) fatal(err error) { r.stop(err) }

// note keeps a line for the report's notes.
func (r *run) note(line string) {
	r.mu.Lock()
	r.notes = append(r.notes, line)
	r.mu.Unlock()
}

// dbProblem notes a failure of the database with a content, in words.
func (r *run) dbProblem(sha, phase string, err error) {
	if errors.Is(err, store.ErrLogReplaced) {
		r.fatal(err)
	}
	msg := err.Error()
	if why := store.Explain(err); why != "" {
		msg = why + ": " + msg
	}
	r.problem(Problem{Path: sha, State: string(recording.Waiting), Phase: "database", Error: msg + "; it waits for the next run"})
}

// refused ends the run after the provider refused the API key: every
// other request would be refused too.
func (r *run) refused(he *provider.HTTPError) {
	r.mu.Lock()
	if r.refusal == "" {
		r.refusal = he.Error()
	}
	r.mu.Unlock()
	r.stop(nil)
}

// refuse records that the batch's budget refused the chunk c, which needs
// cost and lacks missing: it stays unsent, for a run with more budget.
func (r *run) refuse(ctx context.Context, c store.Chunk, cost, missing ledger.Amount) {
	if err := r.a.store.Refuse(context.WithoutCancel(ctx), r.batch, c.Key, r.opts.Worker, cost, missing); err != nil {
		r.problem(Problem{Path: c.SHA256, State: recording.Failed, Phase: "budget", Error: err.Error()})
		return
	}
	r.emit(Progress{SHA256: c.SHA256, Stage: StageAnswered, Chunk: c.Index + 1, Chunks: c.Count, Cost: cost, State: journal.Pending,
		Detail: fmt.Sprintf("refused by budget: $%s missing", missing.Decimal(6))})
}

// record stores a chunk's outcome, with its transcript and money, and
// returns the chunk's state. A failure of the database that may pass is
// tried again for a while.
func (r *run) record(ctx context.Context, c store.Chunk, rep journal.Report, t *store.Transcript) journal.State {
	if err := r.recordAgain(c, rep, t); err != nil {
		r.recordFailed(c, err, "")
		return journal.Pending
	}
	return r.recorded(c, rep)
}

// settle stores how a chunk's request that was sent ended, as record
// does, keeping it in the outbox first: if the database cannot record
// it, the next run does, from there.
func (r *run) settle(ctx context.Context, c store.Chunk, rep journal.Report, t *store.Transcript) journal.State {
	file, kerr := r.outbox.put(kept{Batch: r.batch, Chunk: c, Report: rep, Transcript: t, At: time.Now()})
	if kerr != nil {
		r.note(fmt.Sprintf("%s: %v; it is recorded in the database only", r.name(c.SHA256), kerr))
	}
	err := r.recordAgain(c, rep, t)
	if err != nil {
		r.recordFailed(c, err, file)
		return journal.Sending // for the next run to record
	}
	if file != "" {
		if err := r.outbox.done(c.Key); err != nil {
			r.note(fmt.Sprintf("%s: recorded, but its copy in %s could not be removed: %v", r.name(c.SHA256), file, err))
		}
	}
	return r.recorded(c, rep)
}

// recordAttempts bound how often, and for how long, a record that met a
// failure of the database that may pass is tried again.
const (
	recordTries = 6
	recordPause = time.Second
)

// recordAgain records the chunk's outcome, trying again after a failure
// of the database that may pass (a restart, a lost connection).
func (r *run) recordAgain(c store.Chunk, rep journal.Report, t *store.Transcript) error {
	var last error
	pause := 100 * time.Millisecond
	for try := 1; ; try++ {
		err := r.a.store.Record(context.Background(), c, rep, t)
		if err == nil {
			if try > 1 {
				r.note(fmt.Sprintf("%s: recording chunk %d of %d failed %d times (%s) and then succeeded", r.name(c.SHA256), c.Index+1, c.Count, try-1, words(last)))
			}
			return nil
		}
		last = err
		if !store.Passing(err) || try == recordTries {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, recordPause)
	}
}

// words is the explanation of a failure of the database, or its text.
func words(err error) string {
	if why := store.Explain(err); why != "" {
		return why
	}
	return err.Error()
}

// recordFailed notes that the chunk's outcome could not be recorded;
// file, if set, keeps it in the outbox: for the next run when the failure
// may pass, set aside for a person when the journal refused it.
func (r *run) recordFailed(c store.Chunk, err error, file string) {
	if errors.Is(err, store.ErrLogReplaced) {
		r.fatal(err)
	}
	msg := err.Error()
	if why := store.Explain(err); why != "" {
		msg = why + ": " + msg
	}
	switch {
	case file == "":
	case store.Passing(err) || errors.Is(err, store.ErrLogReplaced):
		msg += "; the outcome is kept in " + file + ", and the next run records it from there"
	default:
		if aside, aerr := r.outbox.aside(c.Key); aerr == nil {
			file = aside
		}
		msg += "; what the request got is kept in " + file + ", for a person to look at"
	}
	r.problem(Problem{Path: c.SHA256, State: recording.Failed, Phase: "record", Error: msg})
}

// recorded counts and tells of an outcome that was recorded, and returns
// its state.
func (r *run) recorded(c store.Chunk, rep journal.Report) journal.State {
	if rep.To == journal.Applied {
		r.mu.Lock()
		r.paid++
		r.mu.Unlock()
	}
	r.emit(Progress{SHA256: c.SHA256, Stage: StageAnswered, Chunk: c.Index + 1, Chunks: c.Count, Duration: c.Duration,
		Cost: r.price(c.Duration), State: rep.To, Detail: rep.Detail})
	return rep.To
}

// recordKept records what earlier runs kept in the outbox because the
// database could not record it then.
func (r *run) recordKept(ctx context.Context) {
	entries, bad := r.outbox.list()
	for path, err := range bad {
		r.problem(Problem{Path: path, State: recording.Failed, Phase: "outbox", Error: "an answer kept for the database cannot be read: " + err.Error() + "; it stays there"})
	}
	for _, k := range entries {
		if ctx.Err() != nil {
			return
		}
		err := r.recordAgain(k.Chunk, k.Report, k.Transcript)
		name := r.name(k.Chunk.SHA256)
		switch {
		case err == nil:
			r.note(fmt.Sprintf("%s: the outcome of chunk %d of %d (%s), kept on disk when it could not be recorded, is recorded", name, k.Chunk.Index+1, k.Chunk.Count, k.Report.To))
			if k.Report.To == journal.Applied {
				r.mu.Lock()
				r.paid++
				r.mu.Unlock()
			}
		case r.alreadyRecorded(k):
			// Recorded before its copy could be removed.
		default:
			r.recordFailed(k.Chunk, err, r.outbox.path(k.Chunk.Key))
			continue
		}
		if err := r.outbox.done(k.Chunk.Key); err != nil {
			r.note(fmt.Sprintf("%s: %s could not be removed: %v", name, r.outbox.path(k.Chunk.Key), err))
		}
	}
}

// alreadyRecorded reports whether the outcome that k keeps is the one
// the journal has.
func (r *run) alreadyRecorded(k kept) bool {
	op, err := r.a.store.Operation(context.Background(), k.Chunk.Key)
	if err != nil || op.State != k.Report.To && !(k.Report.To == journal.FailedSafe && op.State == journal.NotApplied) {
		return false
	}
	return op.Attempts == k.Report.Attempt
}

// price is the cost of a request of d, as the provider bills it, with
// the options the run asks for.
func (r *run) price(d time.Duration) ledger.Amount {
	return Pricing{PerMinute: r.opts.PricePerMinute, Billing: r.opts.Billing, Options: r.opts.Options}.Cost(d)
}

// fail marks the batch's files of a content as failed before any payment.
func (r *run) fail(ctx context.Context, sha, phase string, cause error) {
	if err := r.a.store.FailContent(context.WithoutCancel(ctx), r.batch, sha, phase, cause.Error()); err != nil {
		cause = errors.Join(cause, err)
	}
	r.problem(Problem{Path: sha, State: recording.Failed, Phase: phase, Error: cause.Error()})
}

// runReport counts the batch's contents by how far who got with them.
func (a *Archive) runReport(ctx context.Context, batch string, who recording.Transcriber) (RunReport, error) {
	rep := RunReport{Batch: batch, Problems: []Problem{}, Refusals: []Refusal{}, Notes: []string{}, Earlier: []Problem{}}
	progress, err := a.store.ProgressOf(ctx, batch, who)
	if err != nil {
		return rep, err
	}
	for _, p := range progress {
		switch p {
		case recording.Done:
			rep.Done++
		case recording.Ambiguous:
			rep.Ambiguous++
		case recording.FailedSafely:
			rep.Failed++
		case recording.Untranscribed:
			rep.Untranscribed++
		case recording.RefusedByBudget:
			rep.Refused++
		case recording.Sending:
			rep.InFlight++
		default:
			rep.Waiting++
		}
	}
	rep.Refusals, err = a.refusals(ctx, batch, progress)
	return rep, err
}

// shortHash abbreviates s for a file name.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
