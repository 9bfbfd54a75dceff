package sdks_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

var update = flag.Bool("update", false, "rewrite testdata/matrix.golden and the table in docs/sdks.md")

// bound is how long a hang lasts before one of the settings ends it.
const bound = time.Second

// fault is a cell of the matrix: the vendor's first answer (every later
// one is a success), and what ends the wait when it never comes.
type fault struct {
	name  string
	first func(t *testing.T, v vendor) faultserver.Step
	// lost is set when the request was read and its answer never came.
	lost bool
	// Each hang is ended by one of these.
	callerTimeout, sdkTimeout, clientTimeout, attemptTimeout, deadline time.Duration
}

func (f fault) rubiconOnly() bool { return f.attemptTimeout > 0 || f.deadline > 0 }

func vendorAnswer(status int, body string, header ...string) faultserver.Step {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return faultserver.Step{Status: status, Header: h, Body: body}
}

var faults = []fault{
	{name: "reset after read", lost: true, first: func(*testing.T, vendor) faultserver.Step { return faultserver.Do(faultserver.ResetAfterRead) }},
	{name: "close after read", lost: true, first: func(*testing.T, vendor) faultserver.Step { return faultserver.Do(faultserver.CloseAfterRead) }},
	{name: "500, the vendor's error", first: func(t *testing.T, v vendor) faultserver.Step { return vendorAnswer(500, fixture(t, v.failure)) }},
	{name: "503", first: func(t *testing.T, v vendor) faultserver.Step { return vendorAnswer(503, fixture(t, v.failure)) }},
	{name: "429, Retry-After: 1", first: func(t *testing.T, v vendor) faultserver.Step {
		return vendorAnswer(429, fixture(t, v.failure), "Retry-After", "1")
	}},
	{name: "hang, caller's context", lost: true, callerTimeout: bound, first: hang},
	{name: "hang, SDK's attempt timeout", lost: true, sdkTimeout: bound, first: hang},
	{name: "hang, http.Client.Timeout", lost: true, clientTimeout: bound, first: hang},
	{name: "hang, rubicon AttemptTimeout", lost: true, attemptTimeout: bound, first: hang},
	{name: "hang, rubicon Deadline", lost: true, deadline: bound, first: hang},
}

func hang(*testing.T, vendor) faultserver.Step { return faultserver.Do(faultserver.Hang) }

// setup is how the SDK is installed in a run.
type setup struct {
	name      string
	rubicon   bool
	noRetries bool
}

var setups = []setup{
	{name: "SDK alone, defaults"},
	{name: "rubicon, SDK defaults", rubicon: true},
	{name: "rubicon, SDK retries 0", rubicon: true, noRetries: true},
}

// result is what one run of a cell did and what its caller saw.
type result struct {
	paid   int    // paid effects the server counted
	sees   string // what the SDK returned
	report string // rubicon's report of the logical call
}

// TestSDKMatrix runs each SDK, with rubicon's transport installed as its
// HTTP client and alone, against a loopback server that fails as the
// faults say and counts paid effects: 0 duplicates with rubicon, whatever
// the SDK's retry settings, and the caller learns that the charge may have
// been made. The whole table is testdata/matrix.golden and docs/sdks.md.
func TestSDKMatrix(t *testing.T) {
	var mu sync.Mutex
	rows := map[string]string{}
	t.Run("cells", func(t *testing.T) {
		for _, v := range vendors {
			for _, f := range faults {
				if f.sdkTimeout > 0 && !v.hasAttemptTimeout {
					continue
				}
				for _, s := range setups {
					if !s.rubicon && f.rubiconOnly() {
						continue
					}
					t.Run(v.name+"/"+f.name+"/"+s.name, func(t *testing.T) {
						t.Parallel()
						r := run(t, v, f, s)
						check(t, v, f, s, r)
						mu.Lock()
						rows[v.name+"\x00"+f.name+"\x00"+s.name] = fmt.Sprintf("| %s | %s | %s | %d | %s | %s |", v.name, f.name, s.name, r.paid, r.sees, r.report)
						mu.Unlock()
					})
				}
			}
		}
	})
	if t.Failed() {
		return
	}
	compareGolden(t, table(rows))
}

// run makes one paid call of v, installed as s says, against a server
// whose first answer is f's.
func run(t *testing.T, v vendor, f fault, s setup) result {
	srv, err := faultserver.Start(f.first(t, v))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetDefault(vendorAnswer(200, fixture(t, v.success)))

	client := &http.Client{Timeout: f.clientTimeout}
	if s.rubicon {
		cfg := retry.DefaultConfig()
		cfg.AttemptTimeout, cfg.Deadline = f.attemptTimeout, f.deadline
		c, err := transport.NewClient(transport.Options{Policy: retry.MustNew(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = f.clientTimeout
		client = c
	}
	defer client.CloseIdleConnections()

	// A hang that nothing else ends would stop the test: 30 s is far past
	// every bound of the matrix.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if f.callerTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.callerTimeout)
		defer cancel()
	}
	var rep transport.Report
	ctx = transport.WithReport(ctx, &rep)
	callErr := v.call(ctx, srv.URL(), client, settings{noRetries: s.noRetries, attemptTimeout: f.sdkTimeout})

	r := result{paid: paidEffects(srv, v, f.first(t, v)), sees: sees(v, callErr), report: "-"}
	if s.rubicon {
		r.report = describe(rep)
	}
	return r
}

// paidEffects counts the requests of the paid call that the server
// processed: every one but those refused with a 4xx.
func paidEffects(srv *faultserver.Server, v vendor, first faultserver.Step) int {
	n := 0
	for i, req := range srv.Requests() {
		if req.Path != v.path {
			continue
		}
		if i == 0 && first.Fault == faultserver.Answer && first.Status >= 400 && first.Status < 500 {
			continue
		}
		n++
	}
	return n
}

// sees says what the SDK returned, as its caller would read it.
func sees(v vendor, err error) string {
	if err == nil {
		return "success"
	}
	if status, ok := v.status(err); ok {
		return fmt.Sprintf("the SDK's error, status %d", status)
	}
	var e *rubicon.Error
	switch {
	case rubicon.IsAmbiguous(err):
		if errors.Is(err, transport.ErrResendRefused) {
			return "`*rubicon.Error`, outcome unknown (re-send refused)"
		}
		return "`*rubicon.Error`, outcome unknown"
	case errors.As(err, &e):
		return "`*rubicon.Error`, outcome " + string(e.Outcome)
	case errors.Is(err, context.DeadlineExceeded):
		return "`context.DeadlineExceeded` alone"
	}
	return fmt.Sprintf("another error: %T", err)
}

// describe says what rubicon's report of the logical call holds.
func describe(rep transport.Report) string {
	return fmt.Sprintf("%s, %d %s, %d %s", rep.Outcome, rep.Attempts, plural(rep.Attempts, "attempt"), rep.Requests, plural(rep.Requests, "request"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// check asserts what must hold in every run, golden file or not.
func check(t *testing.T, v vendor, f fault, s setup, r result) {
	t.Helper()
	if !s.rubicon {
		return
	}
	if r.paid > 1 {
		t.Errorf("%d paid effects with rubicon installed: %d duplicates", r.paid, r.paid-1)
	}
	if f.lost {
		if !strings.HasPrefix(r.report, string(rubicon.Unknown)) {
			t.Errorf("the answer was lost after the request was read, yet the report says %q", r.report)
		}
		if !strings.Contains(r.sees, "outcome unknown") && r.sees != "`context.DeadlineExceeded` alone" {
			t.Errorf("the caller sees %q: neither rubicon's error nor the context's", r.sees)
		}
		if f.callerTimeout == 0 && f.sdkTimeout == 0 && !strings.Contains(r.sees, "outcome unknown") {
			t.Errorf("the caller sees %q; with no context of the caller's or the SDK's ending the call, want rubicon's error", r.sees)
		}
	}
}

// table renders the rows in the matrix's order.
func table(rows map[string]string) string {
	var b strings.Builder
	b.WriteString("| SDK | first answer | installed | paid effects | the SDK returns | rubicon's report |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, v := range vendors {
		for _, f := range faults {
			for _, s := range setups {
				if row, ok := rows[v.name+"\x00"+f.name+"\x00"+s.name]; ok {
					b.WriteString(row + "\n")
				}
			}
		}
	}
	return b.String()
}

const (
	goldenPath = "testdata/matrix.golden"
	docPath    = "../docs/sdks.md"
	docBegin   = "<!-- matrix: sdks/testdata/matrix.golden -->\n"
	docEnd     = "<!-- end of matrix -->\n"
)

// compareGolden checks the table against the golden file and the copy in
// the documentation, or rewrites both with -update.
func compareGolden(t *testing.T, got string) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no table between %q and %q", docPath, docBegin, docEnd)
	}
	if *update {
		if err := os.WriteFile(goldenPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		doc = slices.Concat(doc[:i+len(docBegin)], []byte(got), doc[j:])
		if err := os.WriteFile(docPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if got != string(want) {
		t.Errorf("the matrix differs from %s (rewrite it with -update if the change is meant):\n%s", filepath.Base(goldenPath), diffLines(string(want), got))
	}
	if inDoc := string(doc[i+len(docBegin) : j]); inDoc != string(want) {
		t.Errorf("the table in %s differs from %s: run the test with -update", docPath, goldenPath)
	}
}

// diffLines lists the lines that differ, for a test failure.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
