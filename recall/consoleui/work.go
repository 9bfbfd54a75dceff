package consoleui

import (
	"context"
	"errors"
	"fmt"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/store"
)

// transcriptField is the settle form's input for the transcript.
const transcriptField = "transcript"

// Work returns how the console shows and settles recall-archive's
// ambiguous requests: by recall's own resolution, as recall-archive
// resolve records it, which settles or releases the money held for the
// request in the same transaction, and keeps the transcript attached.
func (u *UI) Work() console.Work {
	return console.Work{
		Kind: store.Kind, Noun: "request",
		Applied:    "the provider did transcribe, and charged: the money held is spent, and the transcript attached is kept",
		NotApplied: "it did not: the money held is released, and retry-failed --safe-only sends the request again",
		Check: "Ask the provider whether it charged for the request: its usage or billing page around the time it was sent, " +
			"or its request log by the request id. recall-archive reconcile asks a provider that keeps records " +
			"(the sandbox answers GET /v1/sandbox/charges?tag=KEY). If it was charged and you have its text, attach the transcript.",
		Describe: u.describe,
		Fields: []console.Field{{Name: transcriptField, Label: "Transcript (with Applied, if you have it)", File: true,
			Help: "Plain text, or the provider's JSON answer, which keeps the timestamps."}},
		Resolve: u.resolve,
	}
}

// resolve settles the request key by recall's resolution, with the
// transcript the form carries.
func (u *UI) resolve(ctx context.Context, key string, res journal.Resolution, f *console.Form) (journal.Operation, error) {
	data, name, err := f.File(transcriptField)
	if err != nil {
		return journal.Operation{}, errors.New("the transcript file could not be read: send the form again")
	}
	d := recall.Decision{Applied: res.To == journal.Applied, By: res.By, Note: res.Note, Evidence: res.Evidence}
	if data != nil {
		if !d.Applied {
			return journal.Operation{}, errors.New("a transcript goes with Applied: a request that was not applied has none; send the form without the file")
		}
		if d.Transcript, err = recall.ParseTranscript(data); err != nil {
			return journal.Operation{}, fmt.Errorf("%s: %w", name, err)
		}
		if d.Evidence == nil {
			d.Evidence = journal.Evidence{}
		}
		d.Evidence["transcript_file"] = name
	}
	op, err := u.a.Resolve(ctx, key, d)
	if err == nil {
		u.log.Info("resolved", "key", key, "outcome", string(op.State), "by", res.By, "transcript", data != nil)
	}
	return op, err
}
