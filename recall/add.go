package recall

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// AddReport says what add did.
type AddReport struct {
	Batch string `json:"batch"`
	// Added counts media files recorded in the batch by this call.
	Added int `json:"added"`
	// NewContents counts the distinct contents never seen before in any
	// batch; the other added files share content already recorded.
	NewContents int `json:"new_contents"`
	// Unchanged counts files already recorded in the batch with the same
	// content.
	Unchanged int `json:"unchanged"`
	// Skipped counts files passed over as not media: by their extension
	// (.txt, .jpg…), or, with an extension that says nothing, by probing.
	Skipped  int       `json:"skipped"`
	Problems []Problem `json:"problems"`
}

// AddOptions tune Add.
type AddOptions struct {
	// Workers probe and hash files in parallel; default the number of CPUs.
	Workers int
	// Progress, if not nil, is kept up to date as Add goes, for a display
	// to read while it runs.
	Progress *AddProgress
}

// AddProgress counts what an Add has done so far. Add updates it from its
// workers; any goroutine may read it.
type AddProgress struct {
	// Found counts the files found to look at, Probed those probed, and
	// Hashed those read whole.
	Found, Probed, Hashed atomic.Int64
	// Bytes counts the bytes hashed, those of files still being read
	// included.
	Bytes atomic.Int64
}

// Add discovers the media under paths, hashes each file and records it in
// batch once per path; contents are recorded once however many paths or
// batches hold them. A path that cannot be used is reported in the
// report's Problems, recorded where it can be, and never stops the rest.
func (a *Archive) Add(ctx context.Context, batch string, paths []string, opts AddOptions) (AddReport, error) {
	rep := AddReport{Batch: batch, Problems: []Problem{}}
	if err := checkBatchName(batch); err != nil {
		return rep, err
	}
	if len(paths) == 0 {
		return rep, errors.New("add needs at least one path")
	}
	if err := a.store.AddBatch(ctx, batch); err != nil {
		return rep, err
	}
	if err := a.absolve(ctx, batch); err != nil {
		return rep, err
	}

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	progress := opts.Progress
	if progress == nil {
		progress = &AddProgress{}
	}
	// The console shows the counts as they go.
	act := newActivity(a.store, journal.ProcessWorker(), "add", batch)
	act.sample = func() {
		act.put(store.Activity{Path: paths[0], Stage: StageAdding, Done: progress.Hashed.Load(), Total: progress.Found.Load(), Bytes: progress.Bytes.Load()})
	}
	act.start()
	defer act.end()
	var mu sync.Mutex
	record := func(f func(*AddReport)) {
		mu.Lock()
		f(&rep)
		mu.Unlock()
	}
	cands := make(chan candidate, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range cands {
				if ctx.Err() != nil {
					continue
				}
				a.addOne(ctx, batch, c, record, progress)
			}
		})
	}
	discover(paths, func(c candidate) {
		if !c.ignored {
			progress.Found.Add(1)
		}
		cands <- c
	}, func(p problem) {
		record(func(r *AddReport) {
			r.Problems = append(r.Problems, Problem{Path: p.path, State: recording.Rejected, Phase: "discover", Error: p.err.Error()})
		})
	})
	close(cands)
	wg.Wait()
	sort.Slice(rep.Problems, func(i, j int) bool { return rep.Problems[i].Path < rep.Problems[j].Path })
	return rep, ctx.Err()
}

// fileResult is what probing and hashing found for one file.
type fileResult struct {
	path     string
	shown    string
	sha256   string
	size     int64
	info     media.Info
	probed   bool
	state    string
	phase    string
	errorMsg string
}

// display is the path to show for the file: the one it was reached by.
func (r fileResult) display() string {
	if r.shown != "" {
		return r.shown
	}
	return r.path
}

func (a *Archive) addOne(ctx context.Context, batch string, c candidate, record func(func(*AddReport)), progress *AddProgress) {
	if c.ignored {
		record(func(r *AddReport) { r.Skipped++ })
		return
	}
	res := fileResult{path: c.path, shown: c.shown, state: recording.Added}
	// A file that cannot be opened is not "not media": say why, as a
	// failure that a fix of its permissions and retry-failed repair.
	f, err := os.Open(c.path)
	if err != nil {
		res.state, res.phase, res.errorMsg = recording.Failed, "read", describeOpenError(c.path, err).Error()
		a.report(ctx, batch, res, record)
		return
	}
	f.Close()
	info, err := a.tools.Probe(ctx, c.path)
	progress.Probed.Add(1)
	switch {
	case err == nil:
		// A recording is priced by the audio it holds, not by its header.
		if d, err := a.tools.AudioDuration(ctx, c.path); err == nil && d > 0 {
			info.Duration = d
		}
		res.info, res.probed = info, true
	case errors.Is(err, media.ErrNotInstalled):
		res.state, res.phase, res.errorMsg = recording.Failed, "probe", err.Error()
	case errors.Is(err, media.ErrNotMedia) || errors.Is(err, media.ErrNoAudio):
		if !c.expected {
			record(func(r *AddReport) { r.Skipped++ })
			return
		}
		res.state, res.phase, res.errorMsg = recording.Rejected, "probe", err.Error()
	default:
		res.state, res.phase, res.errorMsg = recording.Failed, "probe", err.Error()
	}
	if res.state != recording.Rejected {
		res.sha256, res.size, err = hashCounting(c.path, &progress.Bytes)
		progress.Hashed.Add(1)
		if err != nil {
			res.state, res.phase, res.errorMsg = recording.Failed, "read", describeOpenError(c.path, err).Error()
		}
	}
	a.report(ctx, batch, res, record)
}

// report stores a file's result and counts it in the add report.
func (a *Archive) report(ctx context.Context, batch string, res fileResult, record func(func(*AddReport))) {
	newContent, unchanged, err := a.put(ctx, batch, res)
	record(func(r *AddReport) {
		switch {
		case err != nil:
			r.Problems = append(r.Problems, Problem{Path: res.display(), State: recording.Failed, Phase: "record", Error: err.Error()})
		case res.state != recording.Added:
			r.Problems = append(r.Problems, Problem{Path: res.display(), State: res.state, Phase: res.phase, Error: res.errorMsg})
		case unchanged:
			r.Unchanged++
		default:
			r.Added++
			if newContent {
				r.NewContents++
			}
		}
	})
}

// put records a file's result: its content, if hashed, and the file.
func (a *Archive) put(ctx context.Context, batch string, res fileResult) (newContent, unchanged bool, err error) {
	f := store.File{Batch: batch, Path: res.path, Shown: res.shown, SHA256: res.sha256, State: res.state, Phase: res.phase, Error: res.errorMsg}
	var c *store.Content
	if res.sha256 != "" {
		c = &store.Content{SHA256: res.sha256, Size: res.size, Duration: res.info.Duration, Format: res.info.Format, Video: res.info.Video, Probed: res.probed}
	}
	return a.store.PutFile(ctx, f, c)
}

// absolve records by their real, absolute path the files of batch that
// earlier versions recorded by a relative path, when that path, read from
// the directory add runs in, still names a file: the one it was added
// by, most likely. Those it names no file from here stay as they are,
// and a run says how to add them again.
func (a *Archive) absolve(ctx context.Context, batch string) error {
	rel, err := a.store.RelativePaths(ctx, batch)
	if err != nil {
		return err
	}
	for _, p := range rel {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			continue
		}
		shown := abs
		if shown == real {
			shown = ""
		}
		if err := a.store.MovePath(ctx, batch, p, real, shown); err != nil {
			return err
		}
	}
	return nil
}
