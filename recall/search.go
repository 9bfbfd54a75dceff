package recall

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Hit is a transcript segment that matches a search.
type Hit struct {
	// Paths are the files, in any batch, that hold the recording.
	Paths  []string `json:"paths"`
	SHA256 string   `json:"sha256"`
	// Provider and Model made the transcript.
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
	Start    time.Duration `json:"start_ns"`
	End      time.Duration `json:"end_ns"`
	Snippet  string        `json:"snippet"`
}

// Search finds query in every transcript: all its words, in any order.
// Matches are marked [like this] in the snippets. The sandbox's
// placeholder transcripts are searched only with sandbox.
func (a *Archive) Search(ctx context.Context, query string, limit int, sandbox bool) ([]Hit, error) {
	words := strings.Fields(query)
	if len(words) == 0 {
		return nil, errors.New("recall: search for at least one word")
	}
	if limit <= 0 {
		limit = 50
	}
	found, err := a.store.Search(ctx, words, limit, sandbox)
	if err != nil {
		return nil, err
	}
	var hits []Hit
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
