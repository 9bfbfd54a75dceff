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
