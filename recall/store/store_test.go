package store_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
	"github.com/rubicon-go/rubicon/sqlstore"
)

const sha = "5e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e"

// archive is a store on one backend with a batch "b" of one recording,
// cut in one chunk, and the ledger of the same database, read through its
// public API.
type archive struct {
	s     *store.Store
	l     *ledger.Ledger
	chunk store.Chunk
	ctx   context.Context
	// later moves the database's clock ahead, in nanoseconds.
	later *atomic.Int64
}

func forEachBackend(t *testing.T, fn func(t *testing.T, a *archive)) {
	for _, b := range testdb.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			later := new(atomic.Int64)
			s, err := store.Open(ctx, dsn, store.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(later.Load())) }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			db, err := sqlstore.Open(ctx, dsn, sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			a := &archive{s: s, l: ledger.New(db.LedgerStore(), nil), ctx: ctx, later: later}
			if err := s.AddBatch(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			f := store.File{Batch: "b", Path: "/rec/a.mp3", SHA256: sha, State: recording.Added}
			if _, _, err := s.PutFile(ctx, f, &store.Content{SHA256: sha, Size: 8000, Duration: 2 * time.Second, Probed: true}); err != nil {
				t.Fatal(err)
			}
			chunks, err := s.PlanChunks(ctx, []store.Chunk{{SHA256: sha, Transcriber: recording.Transcriber{Provider: "openai", Model: "whisper-1"}, Count: 1, Duration: 2 * time.Second}})
			if err != nil || len(chunks) != 1 || chunks[0].Key == "" {
				t.Fatalf("plan: %+v, %v", chunks, err)
			}
			a.chunk = chunks[0]
			fn(t, a)
		})
	}
}

// send claims the chunk's request for worker w1 and sends it with amount
// held.
func (a *archive) send(t *testing.T, amount ledger.Amount) error {
	t.Helper()
	_, release, err := a.s.Claim(a.ctx, a.chunk.Key, "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = a.s.Send(a.ctx, "b", a.chunk.Key, "w1", amount)
	return err
}

// holds lists the chunk's holds as id:state:amount.
func (a *archive) holds(t *testing.T) string {
	t.Helper()
	hs, err := a.l.Holds(a.ctx, ledger.HoldFilter{Operation: a.chunk.Key})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		out = append(out, strings.TrimPrefix(h.ID, a.chunk.Key)+":"+string(h.State))
	}
	return strings.Join(out, ",")
}

func (a *archive) money(t *testing.T) store.Money {
	t.Helper()
	m, err := a.s.Money(a.ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSendCommitsTheHoldOfItsAttempt: the hold that pays for a request
// commits with the sending transition, named by the attempt that the
// transition counts; a hold the budget refuses leaves the request unsent,
// and each outcome settles or releases the hold it belongs to.
func TestSendCommitsTheHoldOfItsAttempt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if _, err := a.s.SetBudget(a.ctx, "b", 100, "tester", "test"); err != nil {
			t.Fatal(err)
		}
		if err := a.send(t, 150); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("a send past the budget: %v; want ErrInsufficientFunds", err)
		}
		if op, _ := a.s.Operation(a.ctx, a.chunk.Key); op.State != journal.Pending || op.Attempts != 0 || a.holds(t) != "" {
			t.Fatalf("after a refused hold: %s, attempt %d, holds %q; want the request unsent and nothing held", op.State, op.Attempts, a.holds(t))
		}
		if err := a.send(t, 60); err != nil {
			t.Fatal(err)
		}
		if op, _ := a.s.Operation(a.ctx, a.chunk.Key); op.State != journal.Sending || op.Attempts != 1 || a.holds(t) != "#1:held" {
			t.Fatalf("after sending: %s, attempt %d, holds %q", op.State, op.Attempts, a.holds(t))
		}
		refused := journal.Report{Worker: "w1", To: journal.NotApplied, Phase: rubicon.Answered, Detail: "429"}
		if err := a.s.Record(a.ctx, a.chunk, refused, nil); err != nil {
			t.Fatal(err)
		}
		if got := a.holds(t); got != "#1:voided" || a.money(t).Held != 0 {
			t.Fatalf("after a refusal: holds %q, %+v; want the hold released", got, a.money(t))
		}
		if rep, err := a.s.RetrySafe(a.ctx, "b", "test"); err != nil || len(rep.Moved) != 1 {
			t.Fatalf("retry: %+v, %v", rep, err)
		}
		if err := a.send(t, 60); err != nil {
			t.Fatal(err)
		}
		tr := &store.Transcript{Transcript: recording.Transcript{Text: "hello", Language: "en-GB", Segments: []recording.Segment{{End: time.Second, Text: "hello"}}},
			Provider: "sandbox", Model: "whisper-1", Cost: 55}
		if err := a.s.Record(a.ctx, a.chunk, journal.Report{Worker: "w1", To: journal.Applied}, tr); err != nil {
			t.Fatal(err)
		}
		if got, m := a.holds(t), a.money(t); got != "#1:voided,#2:settled" || m.Spent != 55 || m.Held != 0 || m.Budget != 100 {
			t.Fatalf("after success: holds %q, %+v; want the second attempt's hold settled at 55", got, m)
		}
		progress, err := a.s.Progress(a.ctx, "b")
		if err != nil || progress[sha] != recording.Done {
			t.Fatalf("progress: %v, %v", progress, err)
		}
		parts, err := a.s.Parts(a.ctx, sha, recording.Transcriber{})
		if err != nil || len(parts) != 1 || !parts[0].Transcribed || parts[0].Text != "hello" || parts[0].Provider != "openai" || parts[0].Language != "en-GB" {
			t.Fatalf("parts: %+v, %v", parts, err)
		}
		if lang, detected := store.Language(parts); lang != "en-GB" || !detected {
			t.Errorf("the transcript's language: %q, detected %v; want en-GB, detected", lang, detected)
		}
		if langs, err := a.s.Languages(a.ctx, "b"); err != nil || len(langs) != 1 || langs["en-GB"] != 1 {
			t.Errorf("the batch's languages: %v, %v; want en-GB 1", langs, err)
		}
		if langs, err := a.s.Languages(a.ctx, "other"); err != nil || len(langs) != 0 {
			t.Errorf("another batch's languages: %v, %v; want none", langs, err)
		}
	})
}

// TestAmbiguousKeepsItsHoldUntilResolved: an ambiguous request's hold
// stays, counted as held by ambiguous requests, until a resolution settles
// it at the cost found or releases it.
func TestAmbiguousKeepsItsHoldUntilResolved(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if err := a.s.OpenAccount(a.ctx, "b"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := a.send(t, 60); err != nil {
				t.Fatal(err)
			}
			lost := journal.Report{Worker: "w1", To: journal.Ambiguous, Phase: rubicon.Sent, Detail: "connection reset"}
			if err := a.s.Record(a.ctx, a.chunk, lost, nil); err != nil {
				t.Fatal(err)
			}
			if m := a.money(t); m.Held != 60 || m.HeldAmbiguous != 60 || m.Budget != 0 {
				t.Fatalf("an ambiguous request: %+v; want its 60 held by an ambiguous request", m)
			}
			reqs, err := a.s.Ambiguous(a.ctx, "b")
			if err != nil || len(reqs) != 1 || reqs[0].Held != 60 || reqs[0].SentAt.IsZero() || len(reqs[0].Paths) != 1 {
				t.Fatalf("ambiguous: %+v, %v", reqs, err)
			}
			if other, err := a.s.Ambiguous(a.ctx, "another batch"); err != nil || len(other) != 0 {
				t.Fatalf("ambiguous requests of another batch: %+v, %v", other, err)
			}
			if reqs[0].Attempts == 1 {
				// Not charged: released once its lease is over, and sent
				// again.
				a.later.Add(int64(time.Hour))
				res := store.Resolution{Resolution: journal.Resolution{To: journal.NotApplied, By: "ana", Note: "no charge"}}
				if _, err := a.s.Resolve(a.ctx, a.chunk.Key, res); err != nil {
					t.Fatal(err)
				}
				if m := a.money(t); m.Held != 0 || m.Spent != 0 {
					t.Fatalf("after resolving not applied: %+v", m)
				}
				a.s.RetrySafe(a.ctx, "b", "test")
			}
		}
		res := store.Resolution{Resolution: journal.Resolution{To: journal.Applied, By: "ana", Note: "charged"},
			Transcript: &recording.Transcript{Text: "found", Segments: []recording.Segment{{Text: "found"}}}}
		if _, err := a.s.Resolve(a.ctx, a.chunk.Key, res); err != nil {
			t.Fatal(err)
		}
		if got, m := a.holds(t), a.money(t); got != "#1:voided,#2:settled" || m.Spent != 60 || m.Held != 0 || m.HeldAmbiguous != 0 {
			t.Fatalf("after resolving applied: holds %q, %+v; want the second hold settled at the amount held", got, m)
		}
		hits, err := a.s.Search(a.ctx, []string{"found"}, 5, false)
		if err != nil || len(hits) != 1 || hits[0].SHA256 != sha {
			t.Fatalf("the resolution's transcript is not searchable: %+v, %v", hits, err)
		}
	})
}

// TestRefusalLeavesTheRequestToAnyWorker: a chunk the budget refused
// stays pending, is counted as refused by budget, and another worker (the
// next run, in another process) claims it at once; once sent, the refusal
// is gone. A budget's changes are recorded, and setting it to what it is
// records nothing.
func TestRefusalLeavesTheRequestToAnyWorker(t *testing.T) {
	forEachBackend(t, func(t *testing.T, a *archive) {
		if c, err := a.s.SetBudget(a.ctx, "b", 100, "ann", "run --budget"); err != nil || c.Old != 0 || c.New != 100 {
			t.Fatalf("set: %+v, %v", c, err)
		}
		if _, _, err := a.s.Claim(a.ctx, a.chunk.Key, "w1"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.s.Send(a.ctx, "b", a.chunk.Key, "w1", 150); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("send past the budget: %v", err)
		}
		if err := a.s.Refuse(a.ctx, "b", a.chunk.Key, "w1", 150, 50); err != nil {
			t.Fatal(err)
		}
		if p, _ := a.s.Progress(a.ctx, "b"); p[sha] != recording.RefusedByBudget {
			t.Fatalf("progress after a refusal: %v", p)
		}
		if rs, err := a.s.Refusals(a.ctx, "b"); err != nil || len(rs) != 1 || rs[0].Needed != 150 || rs[0].Missing != 50 || rs[0].SHA256 != sha {
			t.Fatalf("refusals: %+v, %v", rs, err)
		}
		if _, _, err := a.s.Claim(a.ctx, a.chunk.Key, "w2"); err != nil {
			t.Fatalf("another worker cannot claim a refused request: %v", err)
		}
		if c, err := a.s.SetBudget(a.ctx, "b", 100, "bob", "budget"); err != nil || c.Old != c.New {
			t.Fatalf("the same budget again: %+v, %v", c, err)
		}
		if c, err := a.s.SetBudget(a.ctx, "b", 200, "bob", "budget"); err != nil || c.Old != 100 || c.New != 200 {
			t.Fatalf("raise: %+v, %v", c, err)
		}
		if _, err := a.s.Send(a.ctx, "b", a.chunk.Key, "w2", 150); err != nil {
			t.Fatal(err)
		}
		if rs, _ := a.s.Refusals(a.ctx, "b"); len(rs) != 0 {
			t.Fatalf("refusals after the send: %+v", rs)
		}
		changes, err := a.s.BudgetChanges(a.ctx, "b")
		if err != nil || len(changes) != 2 || changes[0].By != "ann" || changes[1].Old != 100 || changes[1].New != 200 || changes[1].How != "budget" {
			t.Fatalf("changes: %+v, %v", changes, err)
		}
	})
}

// TestLanguageOfParts: a transcript's language is the one of most of its
// audio, ties going to the first by tag; detected unless its settings
// ask for one; none when no part has one.
func TestLanguageOfParts(t *testing.T) {
	part := func(lang string, d time.Duration, settings string) store.Part {
		return store.Part{Chunk: store.Chunk{Transcriber: recording.Transcriber{Provider: "deepgram", Model: "nova-3", Settings: settings}, Duration: d}, Language: lang}
	}
	for _, c := range []struct {
		parts    []store.Part
		want     string
		detected bool
	}{
		{[]store.Part{part("fr", time.Minute, ""), part("en", 3*time.Minute, ""), part("fr", time.Minute, "")}, "en", true},
		{[]store.Part{part("fr", time.Minute, ""), part("de", time.Minute, "")}, "de", true},
		{[]store.Part{part("pt-BR", time.Minute, "language=pt-br"), part("", time.Minute, "language=pt-br")}, "pt-BR", false},
		{[]store.Part{part("", time.Minute, "")}, "", false},
		{nil, "", false},
	} {
		if got, detected := store.Language(c.parts); got != c.want || detected != c.detected {
			t.Errorf("%+v: %q, detected %v; want %q, %v", c.parts, got, detected, c.want, c.detected)
		}
	}
}
