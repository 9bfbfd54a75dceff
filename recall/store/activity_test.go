package store_test

import (
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/store"
)

// TestActivity records two workers' activity: a row is replaced but
// keeps when it began, a touch keeps a worker's rows fresh, rows not
// updated for a while are not read and are deleted as stale, and a
// worker's end deletes its rows only.
func TestActivity(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		s, ctx := a.s, a.ctx
		fresh := func(batch string) []store.Activity {
			t.Helper()
			rows, err := s.Activity(ctx, batch, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		conv := store.Activity{Batch: "b", Subject: sha, Path: "/rec/a.mp3", Stage: "converting", Done: 500_000, Total: 2_000_000}
		adding := store.Activity{Batch: "c", Path: "/rec", Stage: "adding", Done: 3, Total: 10, Bytes: 4_000_000}
		if err := s.RecordActivity(ctx, "run-1", store.ActivityChange{Put: []store.Activity{conv}}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordActivity(ctx, "add-1", store.ActivityChange{Put: []store.Activity{adding}}); err != nil {
			t.Fatal(err)
		}
		rows := fresh("b")
		if len(rows) != 1 || rows[0].Worker != "run-1" || rows[0].Stage != "converting" || rows[0].Done != 500_000 || rows[0].Total != 2_000_000 ||
			rows[0].Path != "/rec/a.mp3" || rows[0].Since.IsZero() || !rows[0].Updated.Equal(rows[0].Since) {
			t.Fatalf("batch b's activity: %+v", rows)
		}
		began := rows[0].Since
		if all := fresh(""); len(all) != 2 || all[0].Batch != "b" || all[1].Batch != "c" || all[1].Subject != "" || all[1].Bytes != 4_000_000 {
			t.Fatalf("every batch's activity: %+v", all)
		}

		a.later.Add(int64(20 * time.Second))
		conv.Stage, conv.Chunk, conv.Chunks, conv.Done, conv.Total, conv.Detail = "waiting for an answer", 2, 3, 0, 0, "sent"
		if err := s.RecordActivity(ctx, "run-1", store.ActivityChange{Put: []store.Activity{conv}}); err != nil {
			t.Fatal(err)
		}
		rows = fresh("b")
		if len(rows) != 1 || rows[0].Stage != "waiting for an answer" || rows[0].Chunk != 2 || rows[0].Chunks != 3 || rows[0].Done != 0 ||
			rows[0].Detail != "sent" || !rows[0].Since.Equal(began) || rows[0].Updated.Sub(began) < 20*time.Second {
			t.Fatalf("the row replaced: %+v; want it begun at %s, updated 20 s later", rows, began)
		}
		// 40 s after it was written, the add's row is stale; the run's,
		// touched, is not.
		a.later.Add(int64(20 * time.Second))
		if err := s.RecordActivity(ctx, "run-1", store.ActivityChange{Touch: true}); err != nil {
			t.Fatal(err)
		}
		if all := fresh(""); len(all) != 1 || all[0].Worker != "run-1" {
			t.Fatalf("fresh rows after 40 s: %+v; want the run's, touched", all)
		}
		if n, err := s.DeleteStaleActivity(ctx, 30*time.Second); err != nil || n != 1 {
			t.Fatalf("stale rows deleted: %d, %v; want the add's", n, err)
		}
		if rows, err := s.Activity(ctx, "c", time.Hour); err != nil || len(rows) != 0 {
			t.Fatalf("the add's rows after they were deleted as stale: %+v, %v", rows, err)
		}

		// A finished subject goes; the worker's end takes its other rows.
		other := store.Activity{Batch: "b", Subject: "other", Stage: "cutting", Chunk: 1, Chunks: 2}
		if err := s.RecordActivity(ctx, "run-1", store.ActivityChange{Put: []store.Activity{other}, Gone: []store.ActivityKey{{Batch: "b", Subject: sha}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordActivity(ctx, "run-2", store.ActivityChange{Put: []store.Activity{conv}}); err != nil {
			t.Fatal(err)
		}
		if rows := fresh("b"); len(rows) != 2 || rows[0].Subject != "other" || rows[1].Subject != sha || rows[1].Worker != "run-2" {
			t.Fatalf("after run-1 finished a recording and run-2 began it: %+v", rows)
		}
		if err := s.EndActivity(ctx, "run-1"); err != nil {
			t.Fatal(err)
		}
		if rows := fresh("b"); len(rows) != 1 || rows[0].Worker != "run-2" {
			t.Fatalf("after run-1 ended: %+v; want run-2's row only", rows)
		}
		if err := s.RecordActivity(ctx, "", store.ActivityChange{Touch: true}); err == nil {
			t.Error("activity without a worker's name was recorded")
		}
	})
}
