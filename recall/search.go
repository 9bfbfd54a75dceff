package recall

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// Hit is a transcript segment that matches a search. In JSON, its times
// are start_seconds and end_seconds, from the start of the recording.
type Hit struct {
	// Paths are the files, in any batch, that hold the recording.
	Paths  []string `json:"paths"`
	SHA256 string   `json:"sha256"`
	// Provider and Model made the transcript, with Settings (see
	// recording.Transcriber): every transcript kept is searched, and a
	// recording transcribed with two settings is found in each.
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
	Settings string        `json:"settings,omitempty"`
	Start    time.Duration `json:"-"`
	End      time.Duration `json:"-"`
	Snippet  string        `json:"snippet"`
}

// MarshalJSON writes h with its times in seconds.
func (h Hit) MarshalJSON() ([]byte, error) {
	type fields Hit
	return json.Marshal(struct {
		fields
		Start float64 `json:"start_seconds"`
		End   float64 `json:"end_seconds"`
	}{fields(h), seconds(h.Start), seconds(h.End)})
}

// ErrQuery reports a search query that cannot be read; the error says
// what is wrong with it.
var ErrQuery = store.ErrQuery

// SearchResult is what a search found: the hits shown, and how many
// segments match in all.
type SearchResult struct {
	Query string `json:"query"`
	// Batch is the batch searched; absent when every batch was.
	Batch string `json:"batch,omitempty"`
	Total int    `json:"total"`
	Hits  []Hit  `json:"hits"`
}

// Search finds query in every transcript, as [Archive.Find] does, and
// returns at most limit hits.
func (a *Archive) Search(ctx context.Context, query string, limit int, sandbox bool) ([]Hit, error) {
	res, err := a.Find(ctx, query, batchAll, limit, sandbox)
	return res.Hits, err
}

// batchAll searches every batch.
const batchAll = ""

// Find finds query in the transcripts of batch's recordings (of every
// batch's when batch is empty), best first, at most limit hits, and
// counts the segments that match in all. A query is words, all of which a
// segment holds, in any order; "a phrase" in double quotes; OR between
// alternatives; word* for the words that start so ([store.ParseQuery]).
// Matches are marked [like this] in the snippets. The sandbox's
// placeholder transcripts are searched only with sandbox.
func (a *Archive) Find(ctx context.Context, query, batch string, limit int, sandbox bool) (SearchResult, error) {
	res := SearchResult{Query: query, Batch: batch, Hits: []Hit{}}
	q, err := store.ParseQuery(query)
	if err != nil {
		return res, err
	}
	if batch != batchAll {
		if err := a.checkBatch(ctx, batch); err != nil {
			return res, err
		}
	}
	if limit <= 0 {
		limit = 50
	}
	found, total, err := a.store.Find(ctx, q, store.Find{Batch: batch, Limit: limit, Sandbox: sandbox})
	if err != nil {
		return res, err
	}
	res.Total = total
	for _, h := range found {
		hit := Hit{SHA256: h.SHA256, Provider: h.Provider, Model: h.Model, Settings: h.Settings, Start: h.Start, End: h.End, Snippet: h.Snippet}
		paths, err := a.store.Paths(ctx, batch, h.SHA256)
		if err != nil {
			return res, err
		}
		hit.Paths = append([]string{}, paths...) // [] for none
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// SandboxHolds reports whether the sandbox's placeholder transcripts, left
// out of a search unless asked, hold query: for telling that an empty
// search would find something with them.
func (a *Archive) SandboxHolds(ctx context.Context, query string) (bool, error) {
	hits, err := a.Search(ctx, query, 1, true)
	for _, h := range hits {
		if h.Provider == recording.Sandbox {
			return true, err
		}
	}
	return false, err
}
