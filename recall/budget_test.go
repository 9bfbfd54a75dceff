package recall_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/recall"
)

// paidPricing is the price and rounding of the provider the tests run
// through the sandbox's server, paid in real money.
var paidPricing = recall.Pricing{Provider: "openai", Model: "whisper-1", PerMinute: 6000, Billing: recall.BillingOf("openai")}

// sandboxPricing is the sandbox's price and rounding.
var sandboxPricing = recall.Pricing{Provider: "sandbox", Model: "whisper-1", PerMinute: 6000, Billing: recall.BillingOf("sandbox")}

// TestBudgetStaysWithTheBatch: a budget set by one run holds for every
// later run whatever its options; a run asking for another is refused; the
// budget changes only on purpose, and each change is recorded; what the
// budget refused is not a failure that retry-failed queues, and goes
// through once the budget is raised.
func TestBudgetStaysWithTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := map[string]time.Duration{}
	for i := range 4 {
		recs[string(rune('a'+i))+".mp3"] = time.Duration(30+i) * time.Second
	}
	w := newWorld(t, "", recs)
	// Each recording costs 3,100 to 3,400 micro-dollars.
	rep := w.run(recall.RunOptions{Workers: 1, Budget: 4000, User: "ann"})
	if rep.Done != 1 || rep.Refused != 3 || rep.Failed != 0 {
		t.Fatalf("budget 4000: %+v", rep)
	}
	rep = w.run(recall.RunOptions{Workers: 1})
	if m, _ := w.a.Money(ctx, "b"); m.Budget != 4000 || m.Spent > 4000 || rep.Done != 1 || rep.Refused != 3 {
		t.Fatalf("a run without a budget after one with it: money %+v, %+v", m, rep)
	}
	rr, err := w.a.RetryFailed(ctx, "b")
	if err != nil || rr.Requests != 0 || rr.Items != 0 {
		t.Fatalf("retry-failed queued what the budget refused: %+v, %v", rr, err)
	}
	opts := recall.RunOptions{Budget: 20000, Provider: w.provider("sandbox"), PricePerMinute: 6000, CacheDir: w.cache}
	if _, err := w.a.Run(ctx, "b", opts); !errors.Is(err, recall.ErrBudgetConflict) {
		t.Fatalf("a run asking for another budget: %v; want ErrBudgetConflict", err)
	}
	if m, _ := w.a.Money(ctx, "b"); m.Budget != 4000 {
		t.Fatalf("the refused run changed the budget to %d", m.Budget)
	}
	c, err := w.a.SetBudget(ctx, "b", 20000, "bob", "budget")
	if err != nil || !c.Changed() || c.Old != 4000 || c.New != 20000 {
		t.Fatalf("SetBudget: %+v, %v", c, err)
	}
	if rep := w.run(recall.RunOptions{Workers: 2}); rep.Done != 4 || rep.Refused != 0 || len(rep.Refusals) != 0 {
		t.Fatalf("after raising the budget: %+v", rep)
	}
	b, err := w.a.Budget(ctx, "b")
	if err != nil || b.Budget != 20000 || len(b.Changes) != 2 {
		t.Fatalf("budget and its record: %+v, %v", b, err)
	}
	first, second := b.Changes[0], b.Changes[1]
	if first.Old != 0 || first.New != 4000 || first.By != "ann" || first.How != "run --budget" || first.At.IsZero() ||
		second.Old != 4000 || second.New != 20000 || second.By != "bob" || second.How != "budget" {
		t.Fatalf("the record of changes: %+v", b.Changes)
	}
	w.neverPaidTwice()
}

// TestBudgetEqualToTheEstimatePaysForTheBatch: the estimate prices the
// audio that each recording really holds (a truncated MP3's header says
// far more), as the provider bills it (per started second of each
// request, a 2 s file included): a budget equal to it transcribes the
// whole batch, and it is what the provider charges.
func TestBudgetEqualToTheEstimatePaysForTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "", map[string]time.Duration{"two.wav": 2 * time.Second, "ten.mp3": 10 * time.Second, "long.mp3": 59 * time.Second})
	long := filepath.Join(t.TempDir(), "long.mp3")
	testkit.Tone(t, long, 300, 68*time.Second, "-b:a", "128k")
	data, err := os.ReadFile(long)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.dir, "truncated.mp3"), data[:200_000]) // about 12.5 s of the 68
	if _, err := w.a.Add(ctx, "b", []string{w.dir}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	est, err := w.a.Estimate(ctx, "b", paidPricing)
	if err != nil || est.Contents != 4 {
		t.Fatalf("estimate: %+v, %v", est, err)
	}
	rep := w.run(recall.RunOptions{Workers: 2, Budget: est.Cost, Billing: paidPricing.Billing})
	if rep.Done != 4 || rep.Refused != 0 || rep.Failed != 0 {
		t.Fatalf("a budget of the estimate, %d: %+v", est.Cost, rep)
	}
	var charged ledger.Amount
	for _, c := range w.sandbox.Charges() {
		charged += c.Amount
	}
	if charged != est.Cost {
		t.Errorf("the sandbox charged %d micro-dollars for an estimate of %d", charged, est.Cost)
	}
	after, err := w.a.Estimate(ctx, "b", paidPricing)
	if err != nil || after.Cost != est.Cost || after.RemainingCost != 0 {
		t.Errorf("the estimate after the run: %+v, %v; want the same cost, none remaining", after, err)
	}
}

// TestBillingRoundsEachRequest: per started increment, with a minimum.
func TestBillingRoundsEachRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		b    recall.Billing
		d    time.Duration
		want ledger.Amount
	}{
		{recall.Billing{}, 2 * time.Second, 200},
		{recall.Billing{}, 2088 * time.Millisecond, 300},
		{recall.Billing{Increment: time.Second}, 60 * time.Second, 6000},
		{recall.Billing{Increment: 15 * time.Second}, 16 * time.Second, 3000},
		{recall.Billing{Increment: time.Second, Minimum: 10 * time.Second}, 2 * time.Second, 1000},
		{recall.Billing{}, 0, 0},
	} {
		if got := tt.b.Cost(tt.d, 6000); got != tt.want {
			t.Errorf("%+v: %s costs %d; want %d", tt.b, tt.d, got, tt.want)
		}
	}
}

// TestSandboxMoneyMeetsNoBudget: a batch whose budget pays for its three
// recordings once, run first through the built-in sandbox, then through a
// provider of real money: the sandbox's play money counts neither against
// the budget nor as spent, so the real run transcribes all three, and the
// money says what each provider was paid, the sandbox's apart.
func TestSandboxMoneyMeetsNoBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 10 * time.Second, "b.mp3": 11 * time.Second, "c.mp3": 12 * time.Second})
	est, err := w.a.Estimate(ctx, "b", paidPricing)
	if err != nil {
		t.Fatal(err)
	}
	budget := est.Cost + est.Cost/10
	if rep := w.run(recall.RunOptions{Provider: w.provider("sandbox"), Budget: budget, Workers: 1}); rep.Done != 3 {
		t.Fatalf("the sandbox's run: %+v", rep)
	}
	if m, _ := w.a.Money(ctx, "b"); m.Spent != 0 || m.Held != 0 || m.Play.Spent != est.Cost || m.Budget != budget {
		t.Fatalf("money after the sandbox's run: %+v; want its %d as play money, apart", m, est.Cost)
	}
	rep := w.run(recall.RunOptions{Budget: budget, Workers: 1})
	if rep.Done != 3 || rep.Refused != 0 || rep.Paid != 3 {
		t.Fatalf("the real run after the sandbox's: %+v; want all three paid within the budget", rep)
	}
	m, _ := w.a.Money(ctx, "b")
	if m.Spent != est.Cost || m.Play.Spent != est.Cost || len(m.Providers) != 2 || m.Providers[0].Provider != "openai" || m.Providers[1].Provider != "sandbox" || !m.Providers[1].Play {
		t.Fatalf("money after both runs: %+v", m)
	}
}
