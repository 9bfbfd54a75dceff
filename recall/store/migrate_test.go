package store

import (
	"context"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// TestEarlierArchivesNameTheirTranscribers opens an archive made before
// chunks recorded their provider and model: a transcribed content takes
// its transcript's, one sent but never transcribed its journal
// operation's, and one the journal says nothing of is "unknown"; the
// transcript stays whole and searchable under its provider.
func TestEarlierArchivesNameTheirTranscribers(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			old, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: migrations()[:4]})
			if err != nil {
				t.Fatal(err)
			}
			j := journal.New(old.JournalStore(), journal.Options{})
			shas := map[string]string{"told": "aa", "journal": "bb", "silent": "cc"}
			err = old.Update(ctx, func(tx *sqlstore.Tx) error {
				q := tx.SQL()
				if _, err := q.ExecContext(ctx, `INSERT INTO recall_batches (name, created_at) VALUES ('b', 1)`); err != nil {
					return err
				}
				for _, sha := range shas {
					for _, stmt := range []string{
						`INSERT INTO recall_contents (sha256, size, duration_us, probed, added_at) VALUES ($1, 8000, 2000000, 1, 1)`,
						`INSERT INTO recall_items (batch, path, sha256, state, added_at, updated_at) VALUES ('b', '/rec/' || $1, $1, 'added', 1, 1)`,
						`INSERT INTO recall_chunks (sha256, idx, count, start_us, duration_us, op_key) VALUES ($1, 0, 1, 0, 2000000, 'transcribe/' || $1 || '/0')`,
					} {
						if _, err := q.ExecContext(ctx, stmt, sha); err != nil {
							return err
						}
					}
				}
				if _, err := q.ExecContext(ctx, `INSERT INTO recall_transcripts (sha256, idx, provider, model, text, segments, cost, created_at)
					VALUES ('aa', 0, 'openai', 'whisper-1', 'hello harbour', '[{"start":0,"end":2000000000,"text":"hello harbour"}]', 200, 1)`); err != nil {
					return err
				}
				_, err := q.ExecContext(ctx, `INSERT INTO recall_search (sha256, idx, start_us, end_us, text) VALUES ('aa', 0, 0, 2000000, 'hello harbour')`)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for sha, ev := range map[string]journal.Evidence{
				"aa": {"provider": "openai", "model": "whisper-1"},
				"bb": {"provider": "deepgram", "model": "nova-3"},
				"cc": {"start_s": 0.0},
			} {
				if _, _, err := j.Insert(ctx, journal.NewOperation{Key: "transcribe/" + sha + "/0", Kind: Kind, Subject: sha + "/0", Evidence: ev}); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			s, err := Open(ctx, dsn, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for sha, want := range map[string]recording.Transcriber{"aa": {Provider: "openai", Model: "whisper-1"}, "bb": {Provider: "deepgram", Model: "nova-3"}, "cc": {Provider: Unknown, Model: Unknown}} {
				chunks, err := s.Chunks(ctx, sha, recording.Transcriber{})
				if err != nil || len(chunks) != 1 || chunks[0].Transcriber != want || chunks[0].Key != "transcribe/"+sha+"/0" {
					t.Errorf("content %s: %+v, %v; want its chunk by %s", sha, chunks, err, want)
				}
			}
			if whole, err := s.Transcribers(ctx, "aa"); err != nil || len(whole) != 1 || whole[0] != (recording.Transcriber{Provider: "openai", Model: "whisper-1"}) {
				t.Errorf("the transcribed content's transcribers: %v, %v", whole, err)
			}
			if parts, err := s.Parts(ctx, "aa", recording.Transcriber{Provider: "openai", Model: "whisper-1"}); err != nil || len(parts) != 1 || parts[0].Text != "hello harbour" {
				t.Errorf("its transcript: %+v, %v", parts, err)
			}
			hits, err := s.Search(ctx, []string{"harbour"}, 5, false)
			if err != nil || len(hits) != 1 || hits[0].SHA256 != "aa" || hits[0].Provider != "openai" {
				t.Errorf("search: %+v, %v", hits, err)
			}
			// A new plan for another transcriber stands beside the old one.
			if _, err := s.PlanChunks(ctx, []Chunk{{SHA256: "aa", Transcriber: recording.Transcriber{Provider: "sandbox", Model: "whisper-1"}, Count: 1, Duration: 2e9}}); err != nil {
				t.Fatal(err)
			}
			if p, err := s.ProgressOf(ctx, "b", recording.Transcriber{Provider: "openai", Model: "whisper-1"}); err != nil || p["aa"] != recording.Waiting && p["aa"] != recording.Done {
				t.Errorf("progress by openai: %v, %v", p, err)
			}
			if p, err := s.Progress(ctx, "b"); err != nil || p["aa"] != recording.Waiting {
				t.Errorf("progress of the latest plans: %v, %v", p, err)
			}
		})
	}
}
