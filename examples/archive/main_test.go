package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/recall"
)

// demo runs the demo once for the tests that read its output, which run
// in parallel with each other only: the runs of the demo share the media
// cache.
var demo = sync.OnceValues(func() (string, error) {
	work, err := os.MkdirTemp("", "demo-test-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	var out bytes.Buffer
	err = run(&out, work, "")
	return out.String(), err
})

// demoOutput is what the demo printed.
func demoOutput(t *testing.T) string {
	t.Helper()
	text, err := demo()
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return text
}

// TestDemo keeps the quick start's first command honest.
func TestDemo(t *testing.T) {
	t.Parallel()
	text := demoOutput(t)
	for _, want := range []string{
		"5 files added (4 new contents)",
		"2 requests paid for in this run; 2 recordings done, 2 ambiguous",
		"charged=true",
		"resolved as applied",
		"charged=false",
		"resolved as not_applied",
		"0 files and 1 request queued again",
		"4 recordings done, 0 ambiguous",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
	// Every recording costs the same: the first run spends half the
	// estimate and holds the other half for the two ambiguous calls; in the
	// end, the estimate is spent and nothing is held. The sandbox's money
	// is play money: none of it is real, and it is shown apart.
	estimate := dollars(t, text, `batch interviews: 4 recordings, \S+ of audio, \$([0-9.]+) at`)
	if n := strings.Count(text, "money: spent $0.000000, held $0.000000 (of which $0.000000 by ambiguous requests)"); n != 2 {
		t.Errorf("%d money lines with no real money, want 2:\n%s", n, text)
	}
	first := regexp.MustCompile(`budget none\n  no real money spent; the sandbox's play money apart, counted in no budget: spent \$([0-9.]+), held \$([0-9.]+) \(of which \$([0-9.]+) by ambiguous requests\)`).FindAllStringSubmatch(text, -1)
	if len(first) != 2 {
		t.Fatalf("%d money lines after the runs (run, then retry-failed --safe-only, which runs the batch again), want 2:\n%s", len(first), text)
	}
	for i, want := range [][3]int64{{estimate / 2, estimate / 2, estimate / 2}, {estimate, 0, 0}} {
		for j := range 3 {
			if got := micro(t, first[i][j+1]); got != want[j] {
				t.Errorf("run %d: %q; want spent, held and held by ambiguous requests %v micro-dollars of an estimate of %d", i+1, first[i][0], want, estimate)
				break
			}
		}
	}
}

// TestDemoKeepsTheArchive keeps the archive for the console's quick start:
// the demo stops with its two ambiguous requests, the transcript the
// sandbox kept for the one it charged in a file.
func TestDemoKeepsTheArchive(t *testing.T) {
	// Not in parallel with the demo's other run: both would make the same
	// proxies in the one media cache, and one would wait for the other.
	work := t.TempDir()
	db := filepath.Join(t.TempDir(), "demo.db")
	var out bytes.Buffer
	if err := run(&out, work, db); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"2 ambiguous", "charged=true", "charged=false", "recall-archive console --db " + db} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "$ recall-archive resolve") {
		t.Errorf("the demo resolved a request it keeps for the console:\n%s", text)
	}
	m := regexp.MustCompile(`its transcript, from the provider, is in (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the output does not say where the recovered transcript is:\n%s", text)
	}
	if b, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(b), "sandbox") {
		t.Errorf("the recovered transcript: %q, %v", b, err)
	}
	a, err := recall.Open(context.Background(), db, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if items, err := a.Ambiguous(context.Background(), "interviews"); err != nil || len(items) != 2 {
		t.Fatalf("the kept archive's ambiguous requests: %+v, %v", items, err)
	}
	if err := run(&out, t.TempDir(), db); err == nil || !strings.Contains(err.Error(), "give --db a new file") {
		t.Errorf("an archive that exists: %v", err)
	}
}

// dollars finds the amount that re's group matches in text, in
// micro-dollars.
func dollars(t *testing.T, text, re string) int64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the demo's output lacks %s:\n%s", re, text)
	}
	return micro(t, m[1])
}

// micro reads "0.001400" as 1400.
func micro(t *testing.T, s string) int64 {
	t.Helper()
	whole, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole+(frac + "000000")[:6], 10, 64)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return n
}

// TestDemoRemovesItsFolder: without --work, the demo's temporary folder
// is gone when it ends (it was once left behind).
func TestDemoRemovesItsFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	if err := run(&out, "", ""); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v in %s:\n%s", left, tmp, out.String())
	}
	if !strings.Contains(out.String(), "is removed; give --work DIR") {
		t.Errorf("the demo does not say its folder is removed:\n%s", out.String())
	}
}

// TestDocsDemo: the README's transcript of the demo's first run is the
// report the demo prints (its flags and its progress lines left out).
func TestDocsDemo(t *testing.T) {
	t.Parallel()
	text := demoOutput(t)
	const command = "$ recall-archive run interviews"
	_, after, ok := strings.Cut(text, "\n"+command+" ")
	if !ok {
		t.Fatalf("the demo runs no %q:\n%s", command, text)
	}
	report := []string{command}
	for _, line := range strings.Split(after, "\n")[1:] {
		if line == "" {
			break
		}
		if !strings.HasPrefix(line, "recall-archive: ") {
			report = append(report, line)
		}
	}
	doccheck.Transcript(t, "demo-run", strings.Join(report, "\n"))
}
