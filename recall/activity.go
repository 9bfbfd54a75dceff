package recall

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rubicon-go/rubicon/recall/store"
)

// What runs and adds are doing now is kept in the database, for the
// console, which reads nothing else. The workers only change what an
// activity holds in memory; one goroutine writes what changed, at most
// every activityEvery, in one transaction, and touches its rows every
// activityBeat, so that a reader tells a live writer's rows from those a
// killed process left: not updated for ActivityFresh, they are passed
// over, and the next run or add deletes them.
const (
	// ActivityFresh is how long a row of activity counts as current
	// without being updated.
	ActivityFresh = 30 * time.Second
	activityEvery = 500 * time.Millisecond
	activityBeat  = 5 * time.Second
	// activityWrite bounds each write: a database that does not answer
	// delays no worker, and the next write tries again.
	activityWrite = 5 * time.Second
)

// StageAdding is the stage of an add's counts in its activity.
const StageAdding = "adding"

// activitySeq tells apart the activities of one process.
var activitySeq atomic.Int64

// activity is what one run or add of a batch is doing now: the latest
// row of each subject, written to the store by its own goroutine.
type activity struct {
	s      *store.Store
	worker string
	batch  string
	// path names a subject's row, looked up by the writer, off the
	// workers' way; the run caches what it looks up.
	path func(subject string) string
	// sample, if set, is called before each write: for counts that the
	// workers keep elsewhere.
	sample func()

	mu    sync.Mutex
	rows  map[string]store.Activity // the latest of each subject at work
	dirty map[string]bool           // subjects changed since written, or finished

	// The writer's own: subjects with a row in the store; tried, once it
	// tried to write a row.
	written map[string]bool
	tried   bool

	stop, done chan struct{}
}

// newActivity returns the activity of a run or add (kind) of batch, by
// worker, not yet started.
func newActivity(s *store.Store, worker, kind, batch string) *activity {
	return &activity{s: s, batch: batch, worker: fmt.Sprintf("%s/%s-%d", worker, kind, activitySeq.Add(1)),
		rows: map[string]store.Activity{}, dirty: map[string]bool{}, written: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
}

// start runs the writer until end. It first deletes the rows that
// stopped processes left.
func (a *activity) start() {
	go func() {
		defer close(a.done)
		ctx, cancel := context.WithTimeout(context.Background(), activityWrite)
		a.s.DeleteStaleActivity(ctx, ActivityFresh)
		cancel()
		tick := time.NewTicker(activityEvery)
		defer tick.Stop()
		beat := time.Now()
		for {
			select {
			case <-a.stop:
				if a.tried {
					ctx, cancel := context.WithTimeout(context.Background(), activityWrite)
					a.s.EndActivity(ctx, a.worker)
					cancel()
				}
				return
			case <-tick.C:
			}
			if a.sample != nil {
				a.sample()
			}
			touch := time.Since(beat) >= activityBeat
			if a.write(touch) && touch {
				beat = time.Now()
			}
		}
	}()
}

// end stops the writer and deletes the activity's rows: the run or add
// is over.
func (a *activity) end() {
	close(a.stop)
	<-a.done
}

// put makes row the latest of its subject.
func (a *activity) put(row store.Activity) {
	a.mu.Lock()
	a.putLocked(row)
	a.mu.Unlock()
}

// putLocked is put, with a.mu held.
func (a *activity) putLocked(row store.Activity) {
	row.Batch = a.batch
	if old, ok := a.rows[row.Subject]; !ok || old != row {
		a.rows[row.Subject] = row
		a.dirty[row.Subject] = true
	}
}

// finish deletes the subject's row: the work with it is over.
func (a *activity) finish(subject string) {
	a.mu.Lock()
	if _, ok := a.rows[subject]; ok {
		delete(a.rows, subject)
		a.dirty[subject] = true
	}
	a.mu.Unlock()
}

// step keeps a run's progress with a content.
func (a *activity) step(p Progress) {
	if p.Stage == StageFinished {
		a.finish(p.SHA256)
		return
	}
	row := store.Activity{Subject: p.SHA256, Stage: string(p.Stage), Chunk: p.Chunk, Chunks: p.Chunks, Detail: p.Detail}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.rows[p.SHA256]
	switch {
	case p.Stage == StageWaiting && (old.Stage != string(StageSending) || old.Chunk != p.Chunk):
		// Told by the HTTP client once the request is written, which may
		// be after its answer came: only a chunk still being sent waits.
		return
	case p.Stage == StageConverting && p.Duration > 0:
		row.Done, row.Total = p.Converted.Microseconds(), p.Duration.Microseconds()
	case p.Stage == StageConverting && old.Stage == row.Stage:
		// A notice while converting keeps what was converted.
		row.Done, row.Total = old.Done, old.Total
	case p.Stage == StageAnswered && p.Detail != "":
		row.Detail = string(p.State) + ": " + p.Detail
	case p.Stage == StageAnswered:
		row.Detail = string(p.State)
	}
	a.putLocked(row)
}

// write records what changed since the last write, and touches the
// activity's other rows if touch is set. It reports whether it wrote.
func (a *activity) write(touch bool) bool {
	var change store.ActivityChange
	a.mu.Lock()
	for subject := range a.dirty {
		if row, ok := a.rows[subject]; ok {
			change.Put = append(change.Put, row)
		} else if a.written[subject] {
			change.Gone = append(change.Gone, store.ActivityKey{Batch: a.batch, Subject: subject})
		}
		delete(a.dirty, subject)
	}
	a.mu.Unlock()
	change.Touch = touch && len(a.written) > 0
	if len(change.Put) == 0 && len(change.Gone) == 0 && !change.Touch {
		return false
	}
	for i, row := range change.Put {
		if row.Path == "" && a.path != nil {
			change.Put[i].Path = a.path(row.Subject)
		}
	}
	a.tried = true
	ctx, cancel := context.WithTimeout(context.Background(), activityWrite)
	err := a.s.RecordActivity(ctx, a.worker, change)
	cancel()
	if err != nil {
		// Written again next time, as they then stand; the run or add
		// goes on all the same.
		a.mu.Lock()
		for _, row := range change.Put {
			a.dirty[row.Subject] = true
		}
		for _, k := range change.Gone {
			a.dirty[k.Subject] = true
		}
		a.mu.Unlock()
		return false
	}
	for _, row := range change.Put {
		a.written[row.Subject] = true
	}
	for _, k := range change.Gone {
		delete(a.written, k.Subject)
	}
	return true
}

// Activity returns what runs and adds are doing now with batch (every
// batch when empty), as they last recorded it: their rows updated
// within ActivityFresh.
func (a *Archive) Activity(ctx context.Context, batch string) ([]store.Activity, error) {
	return a.store.Activity(ctx, batch, ActivityFresh)
}
