package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// TestFindQuerySyntax runs the documented query syntax (words, "phrases",
// OR, prefix*) on both stores, with the total count of matches past the
// limit, and within a batch.
func TestFindQuerySyntax(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if err := a.s.OpenAccount(a.ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := a.send(t, 60); err != nil {
			t.Fatal(err)
		}
		var segs []recording.Segment
		for i, text := range []string{"The old Bridge over the river.", "A library of brick.", "the bridge, and the library", "Don't stop"} {
			segs = append(segs, recording.Segment{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Text: text})
		}
		tr := &store.Transcript{Transcript: recording.Transcript{Text: "all", Segments: segs}, Provider: "openai", Model: "whisper-1", Cost: 60}
		if err := a.s.Record(a.ctx, a.chunk, journal.Report{Worker: "w1", To: journal.Applied}, tr); err != nil {
			t.Fatal(err)
		}
		if err := a.s.AddBatch(a.ctx, "other"); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			query string
			want  int
		}{
			{"bridge", 2}, {"BRIDGE river", 1}, {"library bridge", 1}, {"bridge OR library", 3}, {"bri*", 3}, {"lib* OR riv*", 3},
			{`"old bridge"`, 1}, {`"bridge old"`, 0}, {`"the library" OR river`, 2}, {`"old bri*"`, 0}, {"don't", 1}, {`"don't stop"`, 1},
			{"bridge, river.", 1}, {"harbour", 0}, {"bridge OR harbour", 2},
		} {
			q, err := store.ParseQuery(tt.query)
			if err != nil {
				t.Errorf("%s: %v", tt.query, err)
				continue
			}
			hits, total, err := a.s.Find(a.ctx, q, store.Find{Limit: 10})
			if err != nil || total != tt.want || len(hits) != tt.want {
				t.Errorf("%s: %d hits, %d in all, %v; want %d", tt.query, len(hits), total, err, tt.want)
			}
		}
		q, _ := store.ParseQuery("bri*")
		if hits, total, err := a.s.Find(a.ctx, q, store.Find{Limit: 1, Batch: "b"}); err != nil || len(hits) != 1 || total != 3 {
			t.Errorf("bri* in b, limit 1: %d hits, %d in all, %v; want 1 of 3", len(hits), total, err)
		}
		if hits, total, err := a.s.Find(a.ctx, q, store.Find{Limit: 10, Batch: "other"}); err != nil || len(hits) != 0 || total != 0 {
			t.Errorf("bri* in a batch without the recording: %d hits, %d in all, %v", len(hits), total, err)
		}
		for _, bad := range []string{"", "OR bridge", "bridge OR", "bridge OR OR river", `"bridge`, "*"} {
			if _, err := store.ParseQuery(bad); !errors.Is(err, store.ErrQuery) {
				t.Errorf("%q: %v, want ErrQuery", bad, err)
			}
		}
	})
}
