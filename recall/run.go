package recall

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// opKind is the journal kind of a paid transcription request.
const opKind = "transcribe"

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
	// Lease is how long a stopped run's requests stay in flight before the
	// next run declares them ambiguous; default 30 s. Running workers renew
	// theirs.
	Lease time.Duration
	// Progress, if set, is told of every finished chunk.
	Progress func(Progress)
}

// Progress reports one finished chunk.
type Progress struct {
	Path   string
	Chunk  int
	Chunks int
	State  journal.State
	Detail string
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

// accountOf is the ledger account that holds a batch's budget.
func accountOf(batch string) string { return "recall/batch/" + batch }

// noLimit is the limit of a batch without a budget.
const noLimit = ledger.Amount(1 << 60)

// run holds what every worker of one Run shares.
type run struct {
	a        *Archive
	opts     RunOptions
	batch    string
	j        *journal.Journal
	l        *ledger.Ledger
	ffmpeg   string
	worker   string
	sendCtx  context.Context // not canceled by an interrupt: a request in flight finishes
	mu       sync.Mutex
	paid     int
	problems []Problem
}

// Run transcribes batch: for each content not yet transcribed, it makes the
// audio proxy, cuts it to the provider's limits, and for each chunk holds
// the estimated cost, commits sending, makes one paid request, and records
// the answer. A request that may have been applied is never sent again.
// When ctx is canceled, no new chunk starts; the requests in flight finish.
func (a *Archive) Run(ctx context.Context, batch string, opts RunOptions) (RunReport, error) {
	if opts.Provider == nil {
		return RunReport{}, errors.New("recall: run needs a provider")
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
			return RunReport{}, fmt.Errorf("recall: no cache directory for audio proxies: %w", err)
		}
		opts.CacheDir = filepath.Join(dir, "recall-archive")
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return RunReport{}, fmt.Errorf("recall: cache directory: %w", err)
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return RunReport{}, fmt.Errorf("recall: output directory: %w", err)
		}
	}
	if _, err := a.Status(ctx, batch); err != nil {
		return RunReport{}, err
	}
	r := &run{a: a, opts: opts, batch: batch, worker: opts.Worker, sendCtx: context.WithoutCancel(ctx),
		j: journal.New(a.db.JournalStore(), journal.Options{Now: a.now, Lease: opts.Lease}), l: ledger.New(a.db.LedgerStore(), a.now)}
	limit := opts.Budget
	if limit <= 0 {
		limit = noLimit
	}
	if _, err := r.l.Open(ctx, accountOf(batch), "micro-USD", limit); err != nil {
		return RunReport{}, err
	}
	// Operations whose worker died while sending are ambiguous from now on.
	if _, err := r.j.Recover(ctx); err != nil {
		return RunReport{}, err
	}
	contents, err := a.contentsToRun(ctx, batch)
	if err != nil {
		return RunReport{}, err
	}
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
	for _, sha := range contents {
		select {
		case next <- sha:
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

// contentsToRun lists the batch's added contents, oldest first.
func (a *Archive) contentsToRun(ctx context.Context, batch string) ([]string, error) {
	var out []string
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, `SELECT DISTINCT i.sha256, c.added_at FROM recall_items i JOIN recall_contents c ON c.sha256 = i.sha256
			WHERE i.batch = $1 AND i.state = 'added' ORDER BY c.added_at, i.sha256`, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sha string
			var at int64
			if err := rows.Scan(&sha, &at); err != nil {
				return err
			}
			out = append(out, sha)
		}
		return rows.Err()
	})
	return out, err
}

// problem notes a problem with a content, under the content's first path
// in the batch.
func (r *run) problem(p Problem) {
	if paths, err := r.a.itemPaths(context.Background(), r.batch, p.Path); err == nil && len(paths) > 0 {
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
		r.failItems(ctx, sha, "proxy", err)
		return
	}
	for _, c := range chunks {
		if ctx.Err() != nil {
			return
		}
		r.chunk(ctx, sha, c)
	}
	if r.opts.Out != "" {
		if err := r.a.writeOutputs(ctx, r.batch, sha, r.opts.Out); err != nil && !errors.Is(err, errIncomplete) {
			r.problem(Problem{Path: sha, State: StateFailed, Phase: "output", Error: err.Error()})
		}
	}
}

// chunkPlan is one stored chunk of a content.
type chunkPlan struct {
	idx, count      int
	start, duration time.Duration
	key             string
}

// chunks returns the content's chunks, planning them (and the journal
// operations that pay for them) on the first run.
func (r *run) chunks(ctx context.Context, sha string) ([]chunkPlan, error) {
	plans, err := r.a.storedChunks(ctx, sha)
	if err != nil || len(plans) > 0 {
		return plans, err
	}
	proxy, err := r.proxy(ctx, sha)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(proxy)
	if err != nil {
		return nil, err
	}
	// The proxy is constant-bitrate MP3: its size gives its length, as the
	// provider will measure it, without another ffprobe.
	duration := time.Duration(st.Size()) * time.Second / media.ProxyBytesPerSecond
	limits := r.opts.Provider.Limits()
	maxBytes := limits.MaxBytes
	if r.opts.MaxChunkBytes > 0 && (maxBytes == 0 || r.opts.MaxChunkBytes < maxBytes) {
		maxBytes = r.opts.MaxChunkBytes
	}
	n := 1
	if maxBytes > 0 {
		// A margin of 5 % for frames that straddle a cut.
		n = max(n, int((st.Size()*105/100+maxBytes-1)/maxBytes))
	}
	if limits.MaxDuration > 0 {
		n = max(n, int((duration+limits.MaxDuration-1)/limits.MaxDuration))
	}
	each := (duration + time.Duration(n) - 1) / time.Duration(n)
	for i := range n {
		start := time.Duration(i) * each
		plans = append(plans, chunkPlan{idx: i, count: n, start: start, duration: min(each, duration-start),
			key: fmt.Sprintf("%s/%s/%d", opKind, sha, i)})
	}
	err = r.a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		for _, p := range plans {
			if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO recall_chunks (sha256, idx, count, start_us, duration_us, op_key)
				VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (sha256, idx) DO NOTHING`,
				sha, p.idx, p.count, p.start.Microseconds(), p.duration.Microseconds(), p.key); err != nil {
				return err
			}
			if _, _, err := r.j.InsertTx(ctx, tx, journal.NewOperation{Key: p.key, Kind: opKind, Subject: sha + "/" + strconv.Itoa(p.idx),
				Evidence: journal.Evidence{"start_s": p.start.Seconds(), "duration_s": p.duration.Seconds()}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Another worker may have planned first; what is stored wins.
	return r.a.storedChunks(ctx, sha)
}

func (a *Archive) storedChunks(ctx context.Context, sha string) ([]chunkPlan, error) {
	var plans []chunkPlan
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, `SELECT idx, count, start_us, duration_us, op_key FROM recall_chunks WHERE sha256 = $1 ORDER BY idx`, sha)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p chunkPlan
			var start, dur int64
			if err := rows.Scan(&p.idx, &p.count, &start, &dur, &p.key); err != nil {
				return err
			}
			p.start, p.duration = time.Duration(start)*time.Microsecond, time.Duration(dur)*time.Microsecond
			plans = append(plans, p)
		}
		return rows.Err()
	})
	return plans, err
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
	src, err := r.a.sourceOf(ctx, sha)
	if err != nil {
		return "", err
	}
	if err := r.a.tools.Proxy(ctx, src, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// chunkFile returns the audio of one chunk, cut from the proxy when the
// content has several.
func (r *run) chunkFile(ctx context.Context, sha string, c chunkPlan) (string, int64, error) {
	proxy, err := r.proxy(ctx, sha)
	if err != nil {
		return "", 0, err
	}
	path := proxy
	if c.count > 1 {
		path = fmt.Sprintf("%s.%dof%d.mp3", proxy[:len(proxy)-len(".mp3")], c.idx+1, c.count)
		if _, err := os.Stat(path); err != nil {
			if err := r.a.tools.Cut(ctx, proxy, path, c.start, c.duration); err != nil {
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

// sourceOf returns a readable path of the content's file in any batch.
func (a *Archive) sourceOf(ctx context.Context, sha string) (string, error) {
	paths, err := a.texts(ctx, `SELECT path FROM recall_items WHERE sha256 = $1 ORDER BY added_at`, sha)
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

// chunk sends one chunk, if it still needs sending.
func (r *run) chunk(ctx context.Context, sha string, c chunkPlan) {
	op, err := r.j.Get(ctx, c.key)
	if err != nil {
		r.problem(Problem{Path: sha, State: StateFailed, Phase: "journal", Error: err.Error()})
		return
	}
	if op.State != journal.Pending {
		return // done, ambiguous, in flight, or failed: not ours to send
	}
	claimed, err := r.j.ClaimKey(ctx, c.key, r.worker)
	if err != nil {
		return // another worker holds it
	}
	stop := r.j.KeepLeases(r.sendCtx, r.worker, c.key)
	defer stop()

	path, size, err := r.chunkFile(ctx, sha, c)
	if err != nil {
		r.record(ctx, sha, c, journal.Report{Worker: r.worker, To: journal.FailedSafe, Phase: "not_sent", Detail: "audio proxy: " + err.Error()}, nil)
		return
	}
	estimate := r.price(c.duration)
	err = r.a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		hold := ledger.HoldRequest{ID: holdID(c.key, claimed.Attempts+1), Account: accountOf(r.batch), Amount: estimate, Operation: c.key}
		if _, err := r.l.HoldTx(ctx, tx, hold); err != nil {
			return err
		}
		_, err := r.j.SendTx(ctx, tx, c.key, r.worker)
		return err
	})
	if err != nil {
		detail := err.Error()
		if errors.Is(err, ledger.ErrInsufficientFunds) {
			detail = "budget: " + detail
		}
		r.record(ctx, sha, c, journal.Report{Worker: r.worker, To: journal.FailedSafe, Phase: "not_sent", Detail: detail}, nil)
		return
	}

	// The boundary: from here on, a failure may have been paid for; the
	// provider's client never sends what was sent again.
	note := func(ev journal.Evidence) error { return r.j.Annotate(context.WithoutCancel(ctx), c.key, r.worker, ev) }
	t, callErr := r.opts.Provider.Transcribe(r.sendCtx, provider.Chunk{Key: c.key, Path: path, Size: size, Duration: c.duration, Note: note})
	rep := provider.Report(r.worker, callErr)
	if callErr == nil {
		rep.Evidence = journal.Evidence{"provider_request_id": t.RequestID, "provider": r.opts.Provider.Name(), "model": r.opts.Provider.Model()}
		r.record(ctx, sha, c, rep, &t)
		return
	}
	r.record(ctx, sha, c, rep, nil)
}

// record stores a chunk's outcome and settles its hold, in one
// transaction: the transcript and settlement for success, the release of
// the hold for a failure that charged nothing, and nothing for the hold of
// an ambiguous outcome.
func (r *run) record(ctx context.Context, sha string, c chunkPlan, rep journal.Report, t *provider.Transcript) {
	ctx = context.WithoutCancel(ctx) // an outcome is always written
	err := r.a.db.Update(ctx, func(tx *sqlstore.Tx) error {
		op, err := r.j.RecordTx(ctx, tx, c.key, rep)
		if err != nil {
			return err
		}
		switch rep.To {
		case journal.Applied:
			cost := r.price(c.duration)
			if err := r.a.storeTranscript(ctx, tx, sha, c.idx, r.opts.Provider.Name(), r.opts.Provider.Model(), *t, cost); err != nil {
				return err
			}
			_, err = r.l.SettleTx(ctx, tx, holdID(c.key, op.Attempts), cost)
			return err
		case journal.NotApplied, journal.FailedSafe:
			// A hold exists only once this attempt was sent.
			_, err = r.l.VoidTx(ctx, tx, holdID(c.key, op.Attempts))
			if errors.Is(err, ledger.ErrNoHold) {
				err = nil
			}
			return err
		}
		return nil
	})
	if err != nil {
		r.problem(Problem{Path: sha, State: StateFailed, Phase: "record", Error: err.Error()})
		return
	}
	if rep.To == journal.Applied {
		r.mu.Lock()
		r.paid++
		r.mu.Unlock()
	}
	if r.opts.Progress != nil {
		r.opts.Progress(Progress{Path: sha, Chunk: c.idx + 1, Chunks: c.count, State: rep.To, Detail: rep.Detail})
	}
}

// holdID names the budget hold of one attempt of a chunk's request: each
// attempt that is sent holds, and settles or releases, its own.
func holdID(key string, attempt int) string { return key + "#" + strconv.Itoa(attempt) }

// price is the cost of d, billed per started second.
func (r *run) price(d time.Duration) ledger.Amount {
	secs := int64((d + time.Second - 1) / time.Second)
	return ledger.Amount((secs*int64(r.opts.PricePerMinute) + 59) / 60)
}

// failItems marks the batch's items of a content as failed before any
// payment.
func (r *run) failItems(ctx context.Context, sha, phase string, cause error) {
	state := StateFailed
	err := r.a.db.Update(context.WithoutCancel(ctx), func(tx *sqlstore.Tx) error {
		_, err := tx.SQL().ExecContext(ctx, `UPDATE recall_items SET state = $3, phase = $4, error = $5, updated_at = $6 WHERE batch = $1 AND sha256 = $2`,
			r.batch, sha, state, phase, cause.Error(), r.a.now().UnixMicro())
		return err
	})
	if err != nil {
		cause = errors.Join(cause, err)
	}
	r.problem(Problem{Path: sha, State: state, Phase: phase, Error: cause.Error()})
}

// runReport counts the batch's contents by how far they got.
func (a *Archive) runReport(ctx context.Context, batch string) (RunReport, error) {
	rep := RunReport{Batch: batch, Problems: []Problem{}}
	states, err := a.contentStates(ctx, batch)
	if err != nil {
		return rep, err
	}
	for _, s := range states {
		switch s {
		case contentDone:
			rep.Done++
		case contentAmbiguous:
			rep.Ambiguous++
		case contentFailed:
			rep.Failed++
		case contentUntranscribed:
			rep.Untranscribed++
		default:
			rep.Waiting++
		}
	}
	return rep, nil
}

// How far a content got, from its chunks' operations.
const (
	contentWaiting   = "waiting"
	contentDone      = "done"
	contentAmbiguous = "ambiguous"
	contentFailed    = "failed"
	contentSending   = "sending"
	// contentUntranscribed: paid for, as a look-up at the provider found,
	// but the provider kept no transcript to fetch.
	contentUntranscribed = "paid_without_transcript"
)

// contentStates returns, for each added content of batch, how far it got.
func (a *Archive) contentStates(ctx context.Context, batch string) (map[string]string, error) {
	out := map[string]string{}
	err := a.db.View(ctx, func(tx *sqlstore.Tx) error {
		rows, err := tx.SQL().QueryContext(ctx, `SELECT i.sha256, o.state, t.sha256 IS NOT NULL FROM recall_items i
			LEFT JOIN recall_chunks c ON c.sha256 = i.sha256
			LEFT JOIN rubicon_operations o ON o.key = c.op_key
			LEFT JOIN recall_transcripts t ON t.sha256 = c.sha256 AND t.idx = c.idx
			WHERE i.batch = $1 AND i.state = 'added'`, batch)
		if err != nil {
			return err
		}
		defer rows.Close()
		type tally struct{ total, applied, untranscribed, ambiguous, failed, sending int }
		t := map[string]*tally{}
		for rows.Next() {
			var sha string
			var state sql.NullString
			var transcribed bool
			if err := rows.Scan(&sha, &state, &transcribed); err != nil {
				return err
			}
			if t[sha] == nil {
				t[sha] = &tally{}
			}
			if !state.Valid {
				continue
			}
			x := t[sha]
			x.total++
			switch journal.State(state.String) {
			case journal.Applied:
				x.applied++
				if !transcribed {
					x.untranscribed++
				}
			case journal.Ambiguous:
				x.ambiguous++
			case journal.FailedSafe, journal.NotApplied:
				x.failed++
			case journal.Sending:
				x.sending++
			}
		}
		for sha, x := range t {
			switch {
			case x.ambiguous > 0:
				out[sha] = contentAmbiguous
			case x.sending > 0:
				out[sha] = contentSending
			case x.failed > 0:
				out[sha] = contentFailed
			case x.total > 0 && x.applied == x.total && x.untranscribed > 0:
				out[sha] = contentUntranscribed
			case x.total > 0 && x.applied == x.total:
				out[sha] = contentDone
			default:
				out[sha] = contentWaiting
			}
		}
		return rows.Err()
	})
	return out, err
}

// shortHash abbreviates s for a file name.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
