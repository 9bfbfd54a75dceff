package recall

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// ErrOpenRequest reports a removal that would leave a request that may
// have been charged, or is being sent, without a file to show it by.
var ErrOpenRequest = errors.New("recall: a request for the recording is open")

// RemoveReport is what a removal did, and the money that stays.
type RemoveReport struct {
	Batch   string   `json:"batch"`
	Removed []string `json:"removed"`
	// Spent is what the batch paid, which the ledger keeps; PlaySpent the
	// sandbox's play money.
	Spent     ledger.Amount `json:"spent_micro_usd"`
	PlaySpent ledger.Amount `json:"sandbox_play_money_spent_micro_usd"`
}

// Remove removes from batch the files at paths, or all of its files when
// paths is empty. The batch, its budget and what it paid stay in the
// ledger, and so do the recordings' transcripts, which other batches may
// share; adding a file again finds its transcript and pays nothing. A file
// whose recording has an ambiguous request, or one being sent, is not
// removed while no other file of the batch holds that recording: the
// request is resolved (or its run ends) first.
func (a *Archive) Remove(ctx context.Context, batch string, paths []string) (RemoveReport, error) {
	rep := RemoveReport{Batch: batch, Removed: []string{}}
	if err := a.checkBatch(ctx, batch); err != nil {
		return rep, err
	}
	files, err := a.store.Files(ctx, batch, recording.Added, recording.Failed, recording.Rejected)
	if err != nil {
		return rep, err
	}
	var names []string // what to remove, as the store knows the files
	gone := map[string]bool{}
	for _, p := range paths {
		i := slices.IndexFunc(files, func(f store.File) bool { return matches(f, p) })
		if i < 0 {
			return rep, fmt.Errorf("recall: no file %q in batch %q: give the path of a file as it was added", p, batch)
		}
		names, gone[files[i].Path] = append(names, files[i].Path), true
	}
	progress, err := a.store.Progress(ctx, batch)
	if err != nil {
		return rep, err
	}
	for _, f := range files {
		if len(paths) > 0 && !gone[f.Path] {
			continue
		}
		st := progress[f.SHA256]
		if st != recording.Ambiguous && st != recording.Sending {
			continue
		}
		kept := slices.ContainsFunc(files, func(o store.File) bool {
			return o.SHA256 == f.SHA256 && o.State == recording.Added && len(paths) > 0 && !gone[o.Path]
		})
		if !kept {
			what := "is ambiguous: it may have been charged; resolve it first ('recall-archive ambiguous " + batch + "')"
			if st == recording.Sending {
				what = "is being sent: remove the file once its run is over"
			}
			return rep, fmt.Errorf("%w: %q was not removed: the request for its recording %s", ErrOpenRequest, f.Display(), what)
		}
	}
	removed, err := a.store.RemoveFiles(ctx, batch, names...)
	for _, f := range removed {
		rep.Removed = append(rep.Removed, f.Display())
	}
	if err != nil {
		return rep, err
	}
	m, err := a.Money(ctx, batch)
	rep.Spent, rep.PlaySpent = m.Spent, m.Play.Spent
	return rep, err
}

// matches reports whether the path p a person gives names f: as it was
// added, as the store recorded it, or either made absolute.
func matches(f store.File, p string) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return slices.Contains([]string{p, abs, real}, f.Path) || f.Shown != "" && slices.Contains([]string{p, abs}, f.Shown)
}
