package recall

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/rubicon-go/rubicon/recall/recording"
	"strings"
	"time"
)

// Hit is a transcript segment that matches a search. In JSON, its times
// are start_seconds and end_seconds, from the start of the recording.
type Hit struct {
	// Paths are the files, in any batch, that hold the recording.
	Paths  []string `json:"paths"`
	SHA256 string   `json:"sha256"`
	// Provider and Model made the transcript.
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
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

// Search finds query in every transcript: all its words, in any order.
// Matches are marked [like this] in the snippets. The sandbox's
// placeholder transcripts are searched only with sandbox.
func (a *Archive) Search(ctx context.Context, query string, limit int, sandbox bool) ([]Hit, error) {
	words := strings.Fields(query)
	if len(words) == 0 {
		return nil, errors.New("search for at least one word")
	}
	if limit <= 0 {
		limit = 50
	}
	found, err := a.store.Search(ctx, words, limit, sandbox)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(found))
	for _, h := range found {
		hits = append(hits, Hit{SHA256: h.SHA256, Provider: h.Provider, Model: h.Model, Start: h.Start, End: h.End, Snippet: h.Snippet})
	}
	for i := range hits {
		if hits[i].Paths, err = a.store.Paths(ctx, "", hits[i].SHA256); err != nil {
			return nil, err
		}
	}
	return hits, nil
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
