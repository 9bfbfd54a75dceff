package recall

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// Decision is a person's resolution of an ambiguous request.
type Decision struct {
	// Applied is true when the provider did transcribe (and charge).
	Applied bool
	// Transcript is the text obtained from the provider, if any, for an
	// applied request.
	Transcript *recording.Transcript
	// Cost is what the provider charged, for an applied request; 0 keeps
	// the estimate that was held.
	Cost ledger.Amount
	By   string
	Note string
	// Evidence backs the decision.
	Evidence journal.Evidence
}

// Resolve records a decision on the ambiguous request key: applied settles
// its hold (and stores the transcript, if given); not applied releases the
// hold and makes the request eligible for retry-failed.
func (a *Archive) Resolve(ctx context.Context, key string, d Decision) (journal.Operation, error) {
	res := store.Resolution{Cost: d.Cost, Transcript: d.Transcript,
		Resolution: journal.Resolution{To: journal.NotApplied, By: d.By, Note: d.Note, Evidence: d.Evidence}}
	if d.Applied {
		res.To = journal.Applied
	}
	return a.store.Resolve(ctx, key, res)
}

// ParseTranscript reads a transcript that a person obtained from the
// provider, to resolve a request as applied with it: the provider's JSON,
// which keeps the timestamps, or plain text, which has none.
func ParseTranscript(data []byte) (*recording.Transcript, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the transcript is not UTF-8 text: give plain text, or the provider's JSON")
	}
	t, err := provider.ParseVerboseJSON(data)
	if err != nil || t.Text == "" {
		t = recording.Transcript{Text: strings.TrimSpace(string(data))}
		t.Segments = []recording.Segment{{Text: t.Text}}
	}
	if t.Text == "" {
		return nil, errors.New("the transcript is empty: give the text the provider returned, or resolve without one")
	}
	return &t, nil
}
