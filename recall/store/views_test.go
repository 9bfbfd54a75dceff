package store_test

import (
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// TestViewsOfTheArchive: the batches by name, a content by its hash (and
// none by another), and the journal of the requests, as the console
// lists them.
func TestViewsOfTheArchive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if err := a.s.AddBatch(a.ctx, "a later batch"); err != nil {
			t.Fatal(err)
		}
		bs, err := a.s.Batches(a.ctx)
		if err != nil || len(bs) != 2 || bs[0].Name != "a later batch" || bs[1].Name != "b" || time.Since(bs[1].Created) > time.Minute {
			t.Fatalf("batches: %+v, %v", bs, err)
		}
		c, ok, err := a.s.Content(a.ctx, sha)
		if err != nil || !ok || c.Size != 8000 || c.Duration != 2*time.Second || !c.Probed {
			t.Fatalf("the content: %+v, %v, %v", c, ok, err)
		}
		if _, ok, err := a.s.Content(a.ctx, "0"+sha[1:]); ok || err != nil {
			t.Fatalf("a content the archive does not hold: %v, %v", ok, err)
		}
		ops, err := a.s.Journal().List(a.ctx, journal.Filter{Kind: store.Kind})
		if err != nil || len(ops) != 1 || ops[0].Key != a.chunk.Key || ops[0].State != journal.Pending {
			t.Fatalf("the journal's requests: %+v, %v", ops, err)
		}
	})
}

// TestSearchMarksTheMatches: the matches of a search are marked with what
// the caller gives, so that brackets in a transcript are not read as
// marks; Search marks them [like this].
func TestSearchMarksTheMatches(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if err := a.s.OpenAccount(a.ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := a.send(t, 60); err != nil {
			t.Fatal(err)
		}
		text := "[music] the harbour at dawn"
		tr := &store.Transcript{Transcript: recording.Transcript{Text: text, Segments: []recording.Segment{{Start: time.Second, End: 2 * time.Second, Text: text}}},
			Provider: "sandbox", Model: "whisper-1", Cost: 60}
		if err := a.s.Record(a.ctx, a.chunk, journal.Report{Worker: "w1", To: journal.Applied}, tr); err != nil {
			t.Fatal(err)
		}
		hits, err := a.s.SearchMarked(a.ctx, []string{"harbour"}, 5, false, "\ue000", "\ue001")
		if err != nil || len(hits) != 1 || hits[0].Snippet != "[music] the \ue000harbour\ue001 at dawn" || hits[0].Start != time.Second {
			t.Fatalf("marked: %+q, %v", hits, err)
		}
		hits, err = a.s.Search(a.ctx, []string{"harbour"}, 5, false)
		if err != nil || len(hits) != 1 || hits[0].Snippet != "[music] the [harbour] at dawn" {
			t.Fatalf("search: %+q, %v", hits, err)
		}
	})
}
