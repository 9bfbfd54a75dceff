package consoleui

import (
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/store"
)

// doing is what a run or an add is doing now, as a batch's page shows it:
// a recording being worked on, or an add's counts.
type doing struct {
	store.Activity
	// Percent is how much of the recording's audio is converted, when
	// Converting.
	Percent    int
	Converting bool
	// Text says it in words.
	Text string
	// For is how long the subject has been worked on, by the store's
	// clock, as of its last record.
	For time.Duration
}

// now says in words what the rows of activity say.
func now(rows []store.Activity) []doing {
	out := make([]doing, 0, len(rows))
	for _, r := range rows {
		d := doing{Activity: r, For: r.Updated.Sub(r.Since).Round(time.Second)}
		chunk := ""
		if r.Chunks > 1 {
			chunk = fmt.Sprintf(" chunk %d of %d", r.Chunk, r.Chunks)
		}
		switch recall.Stage(r.Stage) {
		case recall.StageConverting:
			d.Text = "converting"
			if r.Total > 0 {
				d.Converting, d.Percent = true, int(min(100, 100*r.Done/r.Total))
				d.Text = fmt.Sprintf("converting %d%%", d.Percent)
			}
		case recall.StageCutting:
			d.Text = "cutting" + chunk
		case recall.StageSending:
			d.Text = "sending" + chunk
		case recall.StageWaiting:
			d.Text = "waiting for the answer"
			if chunk != "" {
				d.Text += " to" + chunk
			}
		case recall.StageAnswered:
			d.Text = "answered"
			if chunk != "" {
				d.Text = chunk[1:] + " answered"
			}
		case recall.StageAdding:
			d.Text = fmt.Sprintf("adding: %d of %s hashed, %s", r.Done, output.Plural(int(r.Total), "file"), output.Bytes(r.Bytes))
			if s := r.Updated.Sub(r.Since); s >= time.Second && r.Bytes > 0 {
				d.Text += fmt.Sprintf(" at %s/s", output.Bytes(int64(float64(r.Bytes)/s.Seconds())))
			}
		default:
			d.Text = r.Stage + chunk
		}
		if r.Detail != "" {
			d.Text += ": " + r.Detail
		}
		out = append(out, d)
	}
	return out
}

// working counts, by batch, the recordings that runs work on now, and
// marks the batches that an add is adding to.
func working(rows []store.Activity) map[string]string {
	recordings, adding := map[string]int{}, map[string]bool{}
	for _, r := range rows {
		if r.Stage == recall.StageAdding {
			adding[r.Batch] = true
		} else {
			recordings[r.Batch]++
		}
	}
	out := map[string]string{}
	for b := range adding {
		out[b] = "adding files"
	}
	for b, n := range recordings {
		mark := "working on " + output.Plural(n, "recording")
		if out[b] != "" {
			mark = out[b] + "; " + mark
		}
		out[b] = mark
	}
	return out
}
