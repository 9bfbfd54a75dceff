package recall_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/recording"
)

// TestAnotherProviderTranscribesAgain: recordings that the sandbox
// transcribed are neither exported nor searched as real transcripts
// unless asked; estimate prices what openai has not transcribed, and a
// run with openai transcribes them again, each paid once; its
// transcripts are then the ones exported and searched.
func TestAnotherProviderTranscribesAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 3 * time.Second, "b.mp3": 4 * time.Second})
	if rep := w.run(recall.RunOptions{Workers: 2, Provider: w.provider("sandbox")}); rep.Done != 2 || rep.Paid != 2 {
		t.Fatalf("the sandbox's run: %+v", rep)
	}
	out := t.TempDir()
	if n, err := w.a.Export(ctx, "b", out, []string{"json"}, false); err != nil || n != 0 {
		t.Fatalf("export of the sandbox's transcripts without asking: %d, %v", n, err)
	}
	if n, err := w.a.Export(ctx, "b", out, []string{"json"}, true); err != nil || n != 2 {
		t.Fatalf("export --include-sandbox: %d, %v", n, err)
	}
	if hits, err := w.a.Search(ctx, "sandbox", 10, false); err != nil || len(hits) != 0 {
		t.Fatalf("search found the sandbox's placeholders without asking: %+v, %v", hits, err)
	}
	if hits, err := w.a.Search(ctx, "sandbox", 10, true); err != nil || len(hits) == 0 || hits[0].Provider != "sandbox" {
		t.Fatalf("search --include-sandbox: %+v, %v", hits, err)
	}

	openai := recall.Pricing{Provider: "openai", Model: "whisper-1", PerMinute: 6000, Billing: recall.BillingOf("openai")}
	est, err := w.a.Estimate(ctx, "b", openai)
	if err != nil || est.RemainingContents != 2 || est.RemainingCost != est.Cost || est.Cost == 0 {
		t.Fatalf("estimate with openai after the sandbox: %+v, %v", est, err)
	}
	if est, err := w.a.Estimate(ctx, "b", sandboxPricing); err != nil || est.RemainingContents != 0 || est.RemainingCost != 0 {
		t.Fatalf("estimate with the sandbox after its run: %+v, %v", est, err)
	}

	opts := recall.RunOptions{Provider: w.provider("openai"), PricePerMinute: 6000, Workers: 2, CacheDir: w.cache}
	rep, err := w.a.Run(ctx, "b", opts)
	if err != nil || rep.Done != 2 || rep.Paid != 2 {
		t.Fatalf("openai's run after the sandbox's: %+v, %v", rep, err)
	}
	if rep, err := w.a.Run(ctx, "b", opts); err != nil || rep.Paid != 0 || rep.Done != 2 {
		t.Fatalf("openai's second run: %+v, %v", rep, err)
	}
	// The sandbox provider tags its requests with their keys; openai's are
	// tagged by their file's name.
	var tagged, byFile int
	for tag, n := range w.paidPerKey() {
		if n == 1 && strings.HasPrefix(tag, "file:") {
			byFile++
		} else if n == 1 {
			tagged++
		}
	}
	if n := len(w.sandbox.Charges()); n != 4 || tagged != 2 || byFile != 2 {
		t.Errorf("%d requests charged (%v); want each recording once by each provider", n, w.paidPerKey())
	}
	// The sandbox's run was play money; openai's is real.
	var paid int64
	for _, c := range w.sandbox.Charges() {
		if strings.HasPrefix(c.Tag, "file:") {
			paid += int64(c.Amount)
		}
	}
	if m, _ := w.a.Money(ctx, "b"); m.Held != 0 || int64(m.Spent) != paid || m.Play.Spent == 0 || len(m.Providers) != 2 {
		t.Errorf("money after both runs: %+v; want $%d spent by openai, the sandbox's apart", m, paid)
	}

	real := t.TempDir()
	if n, err := w.a.Export(ctx, "b", real, []string{"json"}, false); err != nil || n != 2 {
		t.Fatalf("export after openai's run: %d, %v", n, err)
	}
	files, _ := filepath.Glob(filepath.Join(real, "*.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var doc recall.Document
		if err := json.Unmarshal(data, &doc); err != nil || doc.Provider != "openai" || doc.Model != "whisper-1" {
			t.Errorf("%s: %+v, %v; want openai's transcript", f, doc, err)
		}
	}
	if hits, err := w.a.Search(ctx, "sandbox", 10, false); err != nil || len(hits) == 0 || hits[0].Provider != "openai" {
		t.Errorf("search after openai's run: %+v, %v", hits, err)
	}
	if st, err := w.a.Status(ctx, "b"); err != nil || st.Transcription["done"] != 2 || !strings.Contains(st.Batch, "b") {
		t.Errorf("status: %+v, %v", st, err)
	}
}

// TestOtherSettingsAreNotPaidByAccident: a run that asks for other
// settings than those a recording was transcribed with sends nothing for
// it, and counts it; estimate prices the new settings with their option
// on top, and a run that transcribes again on purpose (Again, as
// retranscribe does) holds and pays exactly that, once; the transcripts
// are kept side by side, export takes the latest and search finds both.
func TestOtherSettingsAreNotPaidByAccident(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t, "", map[string]time.Duration{"a.mp3": 3 * time.Second, "b.mp3": 4 * time.Second})
	if rep := w.run(recall.RunOptions{Workers: 2}); rep.Done != 2 || rep.Paid != 2 || rep.OtherSettings != 0 {
		t.Fatalf("the first run: %+v", rep)
	}
	portuguese, err := provider.New(provider.Options{Name: "openai", BaseURL: w.url, Model: "whisper-1", Timeout: 30 * time.Second, Hints: provider.Hints{Language: "pt"}})
	if err != nil {
		t.Fatal(err)
	}
	if portuguese.Settings() != "language=pt" {
		t.Fatalf("the settings of --language pt: %q", portuguese.Settings())
	}
	rep := w.run(recall.RunOptions{Workers: 2, Provider: portuguese})
	if rep.Paid != 0 || rep.OtherSettings != 2 || len(rep.Others) != 2 || rep.Waiting != 0 || rep.Done != 0 || len(w.sandbox.Charges()) != 2 {
		t.Fatalf("a run with other settings: %+v, %d charges; want nothing sent and both counted", rep, len(w.sandbox.Charges()))
	}
	for _, o := range rep.Others {
		if o.By != (recording.Transcriber{Provider: "openai", Model: "whisper-1"}) || !strings.HasSuffix(o.Path, ".mp3") {
			t.Errorf("a recording left: %+v; want its path and the first run's transcriber", o)
		}
	}

	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"openai/whisper-1": {"options": {"language": "0.001", "speakers": "0.5"}}}`), 0o600)
	p, err := recall.LoadPrices(prices)
	if err != nil {
		t.Fatal(err)
	}
	pricing, err := p.For(provider.Options{Name: "openai", Model: "whisper-1", Hints: provider.Hints{Language: "pt"}})
	if err != nil || pricing.PerMinute != 6000 || pricing.Settings != "language=pt" || len(pricing.Options) != 1 || pricing.Options[0] != (recall.OptionPrice{Option: "language", PerMinute: 1000}) {
		t.Fatalf("the pricing of --language pt: %+v, %v; want whisper-1's price and the language's on top, not the speakers'", pricing, err)
	}
	plain, err := w.a.Estimate(ctx, "b", recall.Pricing{Provider: "openai", Model: "whisper-1", PerMinute: 6000, Billing: recall.BillingOf("openai"), Settings: "language=pt"})
	if err != nil {
		t.Fatal(err)
	}
	est, err := w.a.Estimate(ctx, "b", pricing)
	// Each request billed per started second at $0.006 a minute, and
	// again at $0.001 on top: the option a sixth of the price, rounded up.
	if err != nil || est.RemainingContents != 2 || est.OtherSettings != 2 || len(est.Options) != 1 || est.Options[0].Cost < plain.Cost/6 || est.Options[0].Cost > plain.Cost/6+2 ||
		est.Cost != plain.Cost+est.Options[0].Cost || est.RemainingCost != est.Cost || est.Options[0].RemainingCost != est.Options[0].Cost {
		t.Fatalf("estimate with --language pt: %d remaining, %d otherwise, cost %d (%d without the option), remaining %d, options %+v, %v",
			est.RemainingContents, est.OtherSettings, est.Cost, plain.Cost, est.RemainingCost, est.Options, err)
	}
	before, _ := w.a.Money(ctx, "b")
	again := recall.RunOptions{Workers: 2, Provider: portuguese, PricePerMinute: pricing.PerMinute, Options: pricing.Options, Again: true}
	if rep := w.run(again); rep.Paid != 2 || rep.Done != 2 || rep.OtherSettings != 0 || len(w.sandbox.Charges()) != 4 {
		t.Fatalf("the run that transcribes again: %+v, %d charges", rep, len(w.sandbox.Charges()))
	}
	if m, _ := w.a.Money(ctx, "b"); m.Spent != before.Spent+est.Cost || m.Held != 0 {
		t.Errorf("money: %+v; want %d more spent than before (%d), as estimated", m, est.Cost, before.Spent)
	}
	for _, opts := range []recall.RunOptions{again, {Provider: portuguese}, {}} {
		if rep := w.run(opts); rep.Paid != 0 || rep.Done != 2 || rep.OtherSettings != 0 || len(w.sandbox.Charges()) != 4 {
			t.Errorf("a run after both: %+v, %d charges; want each recording done with its settings, nothing sent", rep, len(w.sandbox.Charges()))
		}
	}
	if est, err := w.a.Estimate(ctx, "b", pricing); err != nil || est.RemainingContents != 0 || est.RemainingCost != 0 || est.OtherSettings != 0 {
		t.Errorf("estimate after: %+v, %v", est, err)
	}

	out := t.TempDir()
	if n, err := w.a.Export(ctx, "b", out, []string{"json"}, false); err != nil || n != 2 {
		t.Fatalf("export: %d, %v", n, err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var doc recall.Document
		if err := json.Unmarshal(data, &doc); err != nil || doc.Settings != "language=pt" {
			t.Errorf("%s: %+v, %v; want the latest transcript, with --language pt", f, doc, err)
		}
	}
	hits, err := w.a.Search(ctx, "sandbox", 10, false)
	settings := map[string]int{}
	for _, h := range hits {
		settings[h.Settings]++
	}
	if err != nil || settings[""] == 0 || settings["language=pt"] == 0 {
		t.Errorf("search: %+v, %v; want hits in both transcripts, each with its settings", hits, err)
	}
	if st, err := w.a.Status(ctx, "b"); err != nil || st.Transcription["done"] != 2 {
		t.Errorf("status: %+v, %v", st, err)
	}
	// The sandbox's play money pays for nothing: its run is not stopped.
	if rep := w.run(recall.RunOptions{Workers: 2, Provider: w.provider("sandbox")}); rep.Paid != 2 || rep.OtherSettings != 0 {
		t.Errorf("the sandbox's run after them: %+v", rep)
	}
}
