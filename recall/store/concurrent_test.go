package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// TestConcurrentWritersOfOneContentAgree has four stores on one database,
// as four runs on several machines would, plan the same contents' chunks
// and add the same files at the same moment: each gets the one plan that
// stands, and none sees a conflict of the database.
func TestConcurrentWritersOfOneContentAgree(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			stores := make([]*store.Store, 4)
			for i := range stores {
				s, err := store.Open(ctx, dsn, store.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			if err := stores[0].AddBatch(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			for round := range 100 {
				sha := fmt.Sprintf("%064x", round+1)
				path := fmt.Sprintf("/rec/%d.mp3", round)
				start := make(chan struct{})
				var wg sync.WaitGroup
				errs := make([]error, len(stores))
				plans := make([][]store.Chunk, len(stores))
				for i, s := range stores {
					wg.Go(func() {
						<-start
						f := store.File{Batch: "b", Path: path, SHA256: sha, State: recording.Added}
						if _, _, err := s.PutFile(ctx, f, &store.Content{SHA256: sha, Size: 8000, Duration: 4 * time.Second, Probed: true}); err != nil {
							errs[i] = err
							return
						}
						plans[i], errs[i] = s.PlanChunks(ctx, chunks(sha, 8))
					})
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("round %d, writer %d: %v", round, i, err)
					}
					if len(plans[i]) != 8 || plans[i][7].Key == "" {
						t.Fatalf("round %d, writer %d: plan %+v", round, i, plans[i])
					}
				}
			}
		})
	}
}

// chunks plans sha in n chunks of 2 s.
func chunks(sha string, n int) []store.Chunk {
	out := make([]store.Chunk, n)
	for i := range out {
		out[i] = store.Chunk{SHA256: sha, Transcriber: recording.Transcriber{Provider: "openai", Model: "whisper-1"}, Index: i, Count: n, Start: time.Duration(i) * 2 * time.Second, Duration: 2 * time.Second}
	}
	return out
}

// TestUniqueViolationIsRetriedThenToldClearly makes PostgreSQL refuse the
// planning of a content's chunks with SQLSTATE 23505, as a run that
// inserts the same chunk a moment earlier makes it do: refused twice, the
// plan is tried again and stands; refused every time, the error says what
// happened and what to do, without the database's raw message.
func TestUniqueViolationIsRetriedThenToldClearly(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.Postgres(t)
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `
		CREATE SEQUENCE refused;
		CREATE TABLE refusals (n INTEGER NOT NULL);
		INSERT INTO refusals VALUES (2);
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			-- A sequence counts the refusals: it is not rolled back with them.
			IF nextval('refused') <= (SELECT n FROM refusals) THEN
				RAISE unique_violation USING MESSAGE = 'duplicate key value violates unique constraint "recall_chunks_op_key_key"';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON recall_chunks FOR EACH ROW EXECUTE FUNCTION refuse();`); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBatch(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	put := func(sha string) {
		f := store.File{Batch: "b", Path: "/rec/" + sha[:4] + ".mp3", SHA256: sha, State: recording.Added}
		if _, _, err := s.PutFile(ctx, f, &store.Content{SHA256: sha, Size: 8000, Duration: 4 * time.Second, Probed: true}); err != nil {
			t.Fatal(err)
		}
	}
	first := fmt.Sprintf("%064x", 1)
	put(first)
	if plan, err := s.PlanChunks(ctx, chunks(first, 2)); err != nil || len(plan) != 2 {
		t.Fatalf("refused twice: %+v, %v", plan, err)
	}

	db.ExecContext(ctx, `UPDATE refusals SET n = 1000`)
	second := fmt.Sprintf("%064x", 2)
	put(second)
	_, err = s.PlanChunks(ctx, chunks(second, 2))
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("refused every time: %v, want a ConflictError", err)
	}
	msg := err.Error()
	for _, want := range []string{"planning the chunks of content " + second[:12], "another run", "run the command again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "SQLSTATE") || strings.Contains(msg, "duplicate key") {
		t.Errorf("the error shows the database's raw message: %q", msg)
	}
	if plan, _ := s.Chunks(ctx, second, recording.Transcriber{}); len(plan) != 0 {
		t.Fatalf("a refused plan was partly stored: %+v", plan)
	}
}
