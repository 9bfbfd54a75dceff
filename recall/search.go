package recall

import (
	"context"
	"encoding/json"
	"strings"
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
	// Speaker is the provider's label of who speaks the segment, where
	// speakers were asked for; SpeakerName the name given to it.
	Speaker     string `json:"speaker,omitempty"`
	SpeakerName string `json:"speaker_name,omitempty"`
	Snippet     string `json:"snippet"`
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
	// Speaker is the speaker searched for; absent when every one was.
	Speaker string `json:"speaker,omitempty"`
	Total   int    `json:"total"`
	Hits    []Hit  `json:"hits"`
}

// Search finds query in every transcript, as [Archive.Find] does, and
// returns at most limit hits.
func (a *Archive) Search(ctx context.Context, query string, limit int, sandbox bool) ([]Hit, error) {
	res, err := a.Find(ctx, query, Scope{Limit: limit, Sandbox: sandbox})
	return res.Hits, err
}

// Scope says where a search looks, and how many hits it returns.
type Scope struct {
	// Batch keeps the search to the batch's recordings; empty, every
	// batch's.
	Batch string
	// Speaker keeps it to the segments of one speaker: by the provider's
	// label ("A", or "Speaker A" as exports show it) or by the name a
	// person gave it ([Archive.Speakers]), case aside.
	Speaker string
	// Limit caps the hits returned; 0 is 50.
	Limit int
	// Sandbox: the sandbox's placeholder transcripts are searched too.
	Sandbox bool
}

// SpeakerTerms returns what a search keeps to (store.Find's Speakers)
// for a speaker given as a label ("A"), as the exports show it ("Speaker
// A"), or by the name given to it; none for "".
func SpeakerTerms(speaker string) []string {
	speaker = strings.TrimSpace(speaker)
	if speaker == "" {
		return nil
	}
	terms := []string{speaker}
	// "Speaker A", as the exports show A, finds A's segments too.
	if label, ok := cutPrefixFold(speaker, recording.Speaker("", "")); ok {
		terms = append(terms, label)
	}
	return terms
}

// Find finds query in the transcripts of the recordings in scope, best
// first, at most in.Limit hits, and counts the segments that match in
// all. A query is words, all of which a segment holds, in any order; "a
// phrase" in double quotes; OR between alternatives; word* for the words
// that start so ([store.ParseQuery]). Matches are marked [like this] in
// the snippets. The sandbox's placeholder transcripts are searched only
// with in.Sandbox.
func (a *Archive) Find(ctx context.Context, query string, in Scope) (SearchResult, error) {
	res := SearchResult{Query: query, Batch: in.Batch, Speaker: in.Speaker, Hits: []Hit{}}
	q, err := store.ParseQuery(query)
	if err != nil {
		return res, err
	}
	if in.Batch != "" {
		if err := a.checkBatch(ctx, in.Batch); err != nil {
			return res, err
		}
	}
	if in.Limit <= 0 {
		in.Limit = 50
	}
	f := store.Find{Batch: in.Batch, Limit: in.Limit, Sandbox: in.Sandbox}
	f.Speakers = SpeakerTerms(in.Speaker)
	found, total, err := a.store.Find(ctx, q, f)
	if err != nil {
		return res, err
	}
	res.Total = total
	for _, h := range found {
		hit := Hit{SHA256: h.SHA256, Provider: h.Provider, Model: h.Model, Settings: h.Settings, Start: h.Start, End: h.End, Speaker: h.Speaker, SpeakerName: h.SpeakerName, Snippet: h.Snippet}
		paths, err := a.store.Paths(ctx, in.Batch, h.SHA256)
		if err != nil {
			return res, err
		}
		hit.Paths = append([]string{}, paths...) // [] for none
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// cutPrefixFold returns s without prefix, compared without case, and
// whether s began with it.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
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
