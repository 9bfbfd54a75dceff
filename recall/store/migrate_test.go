package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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
			s := upgrade(t, old, dsn)
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

// TestEarlierArchivesSearchBySpeaker opens an archive made before the
// search index kept speakers: the index is made again from the
// transcripts' segments, each at its time from the start of the
// recording, and a search keeps to one speaker by label or, once named,
// by name.
func TestEarlierArchivesSearchBySpeaker(t *testing.T) {
	before := slices.IndexFunc(migrations(), func(m sqlstore.Migration) bool { return m.SQLite == speakersSQLite })
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			old := earlier(t, dsn, before,
				`INSERT INTO recall_batches (name, created_at) VALUES ('b', 1)`,
				`INSERT INTO recall_contents (sha256, size, duration_us, probed, added_at) VALUES ('aa', 8000, 700000000, 1, 1)`,
				`INSERT INTO recall_items (batch, path, sha256, state, added_at, updated_at) VALUES ('b', '/rec/aa', 'aa', 'added', 1, 1)`,
				`INSERT INTO recall_chunks (sha256, provider, model, idx, count, start_us, duration_us, op_key) VALUES ('aa', 'assemblyai', 'best', 0, 2, 0, 600000000, 'transcribe/aa/0')`,
				`INSERT INTO recall_chunks (sha256, provider, model, idx, count, start_us, duration_us, op_key) VALUES ('aa', 'assemblyai', 'best', 1, 2, 600000000, 100000000, 'transcribe/aa/1')`,
				`INSERT INTO recall_transcripts (sha256, provider, model, idx, text, segments, cost, created_at) VALUES ('aa', 'assemblyai', 'best', 0, 'harbour talk',
					'[{"start":0,"end":1500000000,"text":"the harbour at dawn","speaker":"A"},{"start":1500000000,"end":3000000000,"text":"","speaker":"B"}]', 100, 1)`,
				`INSERT INTO recall_transcripts (sha256, provider, model, idx, text, segments, cost, created_at) VALUES ('aa', 'assemblyai', 'best', 1, 'harbour again',
					'[{"start":2000000,"end":4000000000,"text":"the harbour at dusk","speaker":"B"}]', 100, 1)`,
				`INSERT INTO recall_search (sha256, provider, model, idx, start_us, end_us, text) VALUES ('aa', 'assemblyai', 'best', 0, 0, 1500000, 'the harbour at dawn')`,
				`INSERT INTO recall_search (sha256, provider, model, idx, start_us, end_us, text) VALUES ('aa', 'assemblyai', 'best', 1, 600002000, 604000000, 'the harbour at dusk')`,
			)
			s := upgrade(t, old, dsn)
			find := func(who ...string) []Hit {
				t.Helper()
				hits, total, err := s.Find(ctx, Words("harbour"), Find{Limit: 5, Speakers: who})
				if err != nil || total != len(hits) {
					t.Fatalf("search by %q: %d of %d, %v", who, len(hits), total, err)
				}
				return hits
			}
			if all := find(); len(all) != 2 {
				t.Fatalf("the index made again holds %+v; want both segments", all)
			}
			b := find("b")
			if len(b) != 1 || b[0].Speaker != "B" || b[0].Start != 600*time.Second+2*time.Millisecond || b[0].End != 604*time.Second || b[0].SpeakerName != "" {
				t.Errorf("speaker B's segments: %+v", b)
			}
			if err := s.NameSpeakers(ctx, "aa", map[string]string{"A": "Alice", "B": "Émile"}); err != nil {
				t.Fatal(err)
			}
			if e := find("Émile"); len(e) != 1 || e[0].SpeakerName != "Émile" {
				t.Errorf("Émile's segments: %+v", e)
			}
			if a := find("ALICE"); len(a) != 1 || a[0].Speaker != "A" || a[0].SpeakerName != "Alice" || a[0].Start != 0 {
				t.Errorf("Alice's segments: %+v", a)
			}
			if none := find("Carol"); len(none) != 0 {
				t.Errorf("a speaker no one is named: %+v", none)
			}
			if err := s.NameSpeakers(ctx, "aa", map[string]string{"A": ""}); err != nil {
				t.Fatal(err)
			}
			if names, err := s.SpeakerNames(ctx, "aa"); err != nil || len(names) != 1 || names["B"] != "Émile" {
				t.Errorf("the names after A's was taken away: %v, %v", names, err)
			}
		})
	}
}

// TestEarlierTranscriptsTakeTheDefaultSettings opens an archive made
// before transcripts were kept by their settings (version 8): its chunks,
// transcripts and search index take the default settings and stay whole
// and searchable; a plan with settings stands beside them under a key of
// its own, and a run asking for those settings finds the earlier
// transcript as another's, once its request is paid.
func TestEarlierTranscriptsTakeTheDefaultSettings(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			old := earlier(t, dsn, 8,
				`INSERT INTO recall_batches (name, created_at) VALUES ('b', 1)`,
				`INSERT INTO recall_contents (sha256, size, duration_us, probed, added_at) VALUES ('aa', 8000, 2000000, 1, 1)`,
				`INSERT INTO recall_items (batch, path, sha256, state, added_at, updated_at) VALUES ('b', '/rec/aa', 'aa', 'added', 1, 1)`,
				`INSERT INTO recall_chunks (sha256, provider, model, idx, count, start_us, duration_us, op_key, planned_at)
					VALUES ('aa', 'openai', 'whisper-1', 0, 1, 0, 2000000, 'transcribe/aa/0/openai/whisper-1', 5)`,
				`INSERT INTO recall_transcripts (sha256, provider, model, idx, text, segments, cost, created_at, timing)
					VALUES ('aa', 'openai', 'whisper-1', 0, 'hello harbour', '[{"start":0,"end":2000000000,"text":"hello harbour"}]', 200, 1, 'segments')`,
				`INSERT INTO recall_search (sha256, provider, model, idx, start_us, end_us, speaker, text) VALUES ('aa', 'openai', 'whisper-1', 0, 0, 2000000, '', 'hello harbour')`)
			j := journal.New(old.JournalStore(), journal.Options{})
			if _, _, err := j.Insert(ctx, journal.NewOperation{Key: "transcribe/aa/0/openai/whisper-1", Kind: Kind, Subject: "aa/0/openai/whisper-1",
				Evidence: journal.Evidence{"provider": "openai", "model": "whisper-1"}}); err != nil {
				t.Fatal(err)
			}
			old.Close()

			s, err := Open(ctx, dsn, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			plain := recording.Transcriber{Provider: "openai", Model: "whisper-1"}
			if whole, err := s.Transcribers(ctx, "aa"); err != nil || len(whole) != 1 || whole[0] != plain {
				t.Fatalf("the earlier transcript's transcribers: %+v, %v; want openai/whisper-1 with the default settings", whole, err)
			}
			if parts, err := s.Parts(ctx, "aa", plain); err != nil || len(parts) != 1 || parts[0].Text != "hello harbour" || parts[0].Timing != recording.TimingSegments || parts[0].Language != "" {
				t.Errorf("its transcript: %+v, %v", parts, err)
			}
			if hits, err := s.Search(ctx, []string{"harbour"}, 5, false); err != nil || len(hits) != 1 || hits[0].Transcriber != plain || hits[0].Start != 0 {
				t.Errorf("search: %+v, %v", hits, err)
			}

			speakers := recording.Transcriber{Provider: "openai", Model: "whisper-1", Settings: "speakers=2"}
			chunks, err := s.PlanChunks(ctx, []Chunk{{SHA256: "aa", Transcriber: speakers, Count: 1, Duration: 2e9}})
			if err != nil || len(chunks) != 1 || chunks[0].Settings != "speakers=2" || chunks[0].Key == "transcribe/aa/0/openai/whisper-1" ||
				!strings.HasPrefix(chunks[0].Key, "transcribe/aa/0/openai/whisper-1/") {
				t.Fatalf("a plan with settings: %+v, %v; want a chunk and a key of its own", chunks, err)
			}
			if got, err := s.Chunks(ctx, "aa", plain); err != nil || len(got) != 1 || got[0].Key != "transcribe/aa/0/openai/whisper-1" {
				t.Errorf("the earlier plan after it: %+v, %v", got, err)
			}
			if latest, err := s.Chunks(ctx, "aa", recording.Transcriber{}); err != nil || len(latest) != 1 || latest[0].Transcriber != speakers {
				t.Errorf("the latest plan: %+v, %v; want the one with settings", latest, err)
			}
			if others, err := s.Others(ctx, "aa", speakers); err != nil || len(others) != 0 {
				t.Errorf("others before the earlier request is paid: %+v, %v", others, err)
			}
			// The earlier request is paid: a run with settings finds it.
			if err := s.OpenAccount(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			_, release, err := s.Claim(ctx, "transcribe/aa/0/openai/whisper-1", "w1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Send(ctx, "b", "transcribe/aa/0/openai/whisper-1", "w1", 200); err != nil {
				t.Fatal(err)
			}
			old0, _ := s.Chunks(ctx, "aa", plain)
			if err := s.Record(ctx, old0[0], journal.Report{Worker: "w1", To: journal.Applied, Attempt: 1},
				&Transcript{Transcript: recording.Transcript{Text: "hello harbour"}, Provider: "openai", Model: "whisper-1", Cost: 200}); err != nil {
				t.Fatal(err)
			}
			release()
			if others, err := s.Others(ctx, "aa", speakers); err != nil || len(others) != 1 || others[0] != plain {
				t.Errorf("others of a run with settings: %+v, %v; want the earlier transcript's", others, err)
			}
			if others, err := s.Others(ctx, "aa", plain); err != nil || len(others) != 0 {
				t.Errorf("others of the earlier settings: %+v, %v; want none", others, err)
			}
			// A transcript with settings is kept and searched apart.
			if err := putTranscriptOnce(ctx, s, chunks[0], "harbour master speaking"); err != nil {
				t.Fatal(err)
			}
			if parts, err := s.Parts(ctx, "aa", speakers); err != nil || len(parts) != 1 || parts[0].Text != "harbour master speaking" {
				t.Errorf("the transcript with settings: %+v, %v", parts, err)
			}
			if parts, _ := s.Parts(ctx, "aa", plain); len(parts) != 1 || parts[0].Text != "hello harbour" {
				t.Errorf("the earlier transcript after it: %+v", parts)
			}
			hits, err := s.Search(ctx, []string{"harbour"}, 5, false)
			if err != nil || len(hits) != 2 {
				t.Fatalf("search of both: %+v, %v", hits, err)
			}
			found := map[string]bool{}
			for _, h := range hits {
				found[h.Settings] = true
			}
			if !found[""] || !found["speakers=2"] {
				t.Errorf("search names the settings of each hit: %+v", hits)
			}
		})
	}
}

// upgrade closes old, a database of an earlier schema, and opens it as an
// archive of the current one, closed when the test ends.
func upgrade(t *testing.T, old *sqlstore.DB, dsn string) *Store {
	t.Helper()
	old.Close()
	s, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// earlier returns the database at dsn with the schema of the archive's
// first n migrations, and the rows that stmts insert.
func earlier(t *testing.T, dsn string, n int, stmts ...string) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	old, err := sqlstore.Open(ctx, dsn, sqlstore.Options{Migrations: migrations()[:n]})
	if err != nil {
		t.Fatal(err)
	}
	err = old.Update(ctx, func(tx *sqlstore.Tx) error {
		for _, stmt := range stmts {
			if _, err := tx.SQL().ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		old.Close()
		t.Fatal(err)
	}
	return old
}

// putTranscriptOnce keeps text as the transcript of chunk c, as a
// resolution would.
func putTranscriptOnce(ctx context.Context, s *Store, c Chunk, text string) error {
	return s.update(ctx, named("a test's transcript"), func(tx *sqlstore.Tx) error {
		return putTranscript(ctx, tx, c, Transcript{Transcript: recording.Transcript{Text: text, Segments: []recording.Segment{{End: 2e9, Text: text}}},
			Provider: c.Provider, Model: c.Model, Cost: 1}, s.now())
	})
}

// TestEarlierArchivesGainActivity opens an archive made before runs and
// adds recorded what they do now (version 11): it has none, and records
// it from then on.
func TestEarlierArchivesGainActivity(t *testing.T) {
	before := slices.IndexFunc(migrations(), func(m sqlstore.Migration) bool { return m.SQLite == activitySQL })
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			s := upgrade(t, earlier(t, dsn, before, `INSERT INTO recall_batches (name, created_at) VALUES ('b', 1)`), dsn)
			if rows, err := s.Activity(ctx, "", time.Hour); err != nil || len(rows) != 0 {
				t.Fatalf("the upgraded archive's activity: %+v, %v; want none", rows, err)
			}
			if err := s.RecordActivity(ctx, "w", ActivityChange{Put: []Activity{{Batch: "b", Subject: "aa", Stage: "converting"}}}); err != nil {
				t.Fatal(err)
			}
			if rows, err := s.Activity(ctx, "b", time.Hour); err != nil || len(rows) != 1 || rows[0].Stage != "converting" {
				t.Errorf("after a row was recorded: %+v, %v", rows, err)
			}
		})
	}
}
