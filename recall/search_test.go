package recall_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

func TestSearchFindsSegmentsWithTheirTime(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", map[string]time.Duration{"talk.mp3": 25 * time.Second})
	w.run(recall.RunOptions{MaxChunkBytes: 60_000}) // two chunks: offsets must carry
	hits, err := w.a.Search(context.Background(), "segment 2", 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 {
		t.Fatal("no hit for words every placeholder segment 2 holds")
	}
	var starts []time.Duration
	for _, h := range hits {
		if !strings.Contains(h.Snippet, "[segment]") || !strings.HasSuffix(h.Paths[0], "talk.mp3") {
			t.Errorf("hit %+v: want the file and a marked snippet", h)
		}
		starts = append(starts, h.Start)
	}
	// Each chunk's second segment starts 10 s into the chunk: at 10 s, and
	// 10 s after the second chunk's start.
	found10, foundLater := false, false
	for _, s := range starts {
		found10 = found10 || s == 10*time.Second
		foundLater = foundLater || s > 20*time.Second
	}
	if !found10 || !foundLater {
		t.Errorf("segment starts %v: want 10 s and one past 20 s (the second chunk's offset)", starts)
	}
	// FTS5's own syntax is never read from a query: only the documented
	// one, and what it cannot read is a clear error, not the store's.
	for _, q := range []string{`NEAR*`, `(segment)`, `NOT segment`, `segment AND`, `col:segment`, `^segment`} {
		if _, err := w.a.Search(context.Background(), q, 5, true); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	for _, q := range []string{`"unbalanced`, `) OR (`} {
		if _, err := w.a.Search(context.Background(), q, 5, true); !errors.Is(err, recall.ErrQuery) {
			t.Errorf("search %q: %v, want ErrQuery", q, err)
		}
	}
	if _, err := w.a.Search(context.Background(), "   ", 5, true); err == nil {
		t.Error("an empty search succeeded")
	}
}

func TestReconcileAsksTheSandbox(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "1:charge-drop,2:503", map[string]time.Duration{"a.mp3": 2 * time.Second, "b.mp3": 3 * time.Second})
	if rep := w.run(recall.RunOptions{Workers: 1, Provider: w.provider("sandbox")}); rep.Ambiguous != 2 {
		t.Fatalf("run: %+v", rep)
	}
	if _, err := w.a.Reconcile(context.Background(), "b", w.provider("openai")); !errors.Is(err, recall.ErrCannotAsk) {
		t.Fatalf("reconcile with a provider that cannot be asked: %v", err)
	}
	w.pastLeases()
	res, err := w.a.Reconcile(context.Background(), "b", w.provider("sandbox"))
	if err != nil || len(res) != 2 {
		t.Fatalf("reconcile: %+v, %v", res, err)
	}
	states := map[journal.State]int{}
	for _, r := range res {
		states[r.State]++
	}
	if states[journal.Applied] != 1 || states[journal.NotApplied] != 1 {
		t.Fatalf("reconciled states %v, want one applied (charged) and one not applied (503)", states)
	}
	w.a.RetryFailed(context.Background(), "b")
	rep := w.run(recall.RunOptions{Provider: w.provider("sandbox")})
	if rep.Done != 2 || len(w.sandbox.Charges()) != 2 {
		t.Fatalf("after reconcile and retry: %+v, %d charges", rep, len(w.sandbox.Charges()))
	}
	w.neverPaidTwice()
	var charged int64
	for _, c := range w.sandbox.Charges() {
		charged += int64(c.Amount)
	}
	// The sandbox's charges are play money: apart, never spent.
	if m, _ := w.a.Money(context.Background(), "b"); int64(m.Play.Spent) != charged || m.Play.Held != 0 || m.Spent != 0 || m.Held != 0 {
		t.Fatalf("money %+v, the sandbox charged %d in play money", m, charged)
	}
	// The applied one's transcript came from the look-up: it is searchable.
	if hits, _ := w.a.Search(context.Background(), "sandbox", 10, true); len(hits) < 2 {
		t.Fatalf("%d hits, want the segments of both recordings", len(hits))
	}
}

// TestRunOnPostgres plays a run with a fault against PostgreSQL, whose SQL
// differs for search.
func TestRunOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := testdb.Postgres(t)
	w := newWorld(t, "1:503", map[string]time.Duration{"a.mp3": 2 * time.Second, "b.mp3": 12 * time.Second})
	a, err := recall.Open(context.Background(), dsn, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w.a = a
	if _, err := a.Add(context.Background(), "b", []string{w.dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := w.run(recall.RunOptions{Workers: 2})
	if rep.Done != 1 || rep.Ambiguous != 1 {
		t.Fatalf("run on PostgreSQL: %+v", rep)
	}
	if hits, err := a.Search(context.Background(), "segment", 10, true); err != nil || len(hits) == 0 {
		t.Fatalf("search on PostgreSQL: %d hits, %v", len(hits), err)
	}
	if m, _ := a.Money(context.Background(), "b"); m.HeldAmbiguous == 0 || m.Spent == 0 {
		t.Fatalf("money on PostgreSQL: %+v", m)
	}
}

// TestDatabaseConflictLeavesTheRecordingWaiting has PostgreSQL refuse
// every plan of a recording's chunks with a unique violation, as a
// conflict with another run does: the run says so plainly under the
// file's path, sends nothing, and leaves the recording waiting, not
// failed; once the database accepts the plan, the next run transcribes it.
func TestDatabaseConflictLeavesTheRecordingWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testdb.Postgres(t)
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 2 * time.Second})
	a, err := recall.Open(ctx, dsn, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w.a = a
	if _, err := a.Add(ctx, "b", []string{w.dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE unique_violation USING MESSAGE = 'duplicate key value violates unique constraint "recall_chunks_op_key_key"';
		END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON recall_chunks FOR EACH ROW EXECUTE FUNCTION refuse();`); err != nil {
		t.Fatal(err)
	}
	rep := w.run(recall.RunOptions{})
	path := filepath.Join(w.dir, "a.mp3")
	if len(rep.Problems) != 1 || rep.Problems[0].Path != path || rep.Problems[0].Phase != "database" ||
		!strings.Contains(rep.Problems[0].Error, "run the command again") || strings.Contains(rep.Problems[0].Error, "SQLSTATE") {
		t.Fatalf("problems: %+v", rep.Problems)
	}
	if rep.Waiting != 1 || rep.Failed != 0 || w.sandbox.Requests() != 0 {
		t.Fatalf("run: %+v, %d requests", rep, w.sandbox.Requests())
	}
	if st, _ := a.Status(ctx, "b"); st.Items[recording.Failed] != 0 {
		t.Fatalf("the file was marked failed: %+v", st.Items)
	}
	db.ExecContext(ctx, `DROP TRIGGER refuse ON recall_chunks`)
	if rep := w.run(recall.RunOptions{}); rep.Done != 1 || len(w.sandbox.Charges()) != 1 {
		t.Fatalf("the run after: %+v", rep)
	}
}
