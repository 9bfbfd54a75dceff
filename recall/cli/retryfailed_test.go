package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestRetryFailedRunsWhatFailedBeforePayment runs the binary: a request the
// provider refused without charging is queued by 'retry-failed
// --safe-only --queue-only' and not sent, and sent, with run's flags, by
// 'retry-failed --safe-only'; it is paid once.
func TestRetryFailedRunsWhatFailedBeforePayment(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	for i := range 2 {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 300+100*i, 2*time.Second)
	}
	plan, err := sandbox.ParsePlan("1:429,2:429")
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New(sandbox.Options{Plan: plan})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { sb.Close(); srv.Close() })
	env := []string{"RECALL_DB=" + filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME=" + t.TempDir()}
	if r := binary(t, bin, env, "add", "bb", rec); r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	r := binary(t, bin, env, "run", "bb", "--provider-url", srv.URL, "--workers", "1")
	if r.code != cli.ExitItemProblems || !strings.Contains(r.stdout, "2 failed safely") || len(sb.Charges()) != 0 {
		t.Fatalf("run with two refusals by the provider: exit %d, %d charges\n%s%s", r.code, len(sb.Charges()), r.stdout, r.stderr)
	}
	if hint := "'recall-archive retry-failed bb --safe-only --provider sandbox --model whisper-1 --provider-url " + srv.URL + "'"; !strings.Contains(r.stdout, hint) {
		t.Errorf("the run does not suggest %s:\n%s", hint, r.stdout)
	}
	r = binary(t, bin, env, "retry-failed", "bb", "--safe-only", "--queue-only")
	if r.code != 0 || !strings.Contains(r.stdout, "0 files and 2 requests queued again; run the batch") || len(sb.Charges()) != 0 {
		t.Fatalf("retry-failed --queue-only: exit %d, %d charges\n%s%s", r.code, len(sb.Charges()), r.stdout, r.stderr)
	}
	if r = binary(t, bin, env, "status", "bb"); !strings.Contains(r.stdout, "0 done, 0 ambiguous, 0 failed, 0 refused by budget, 2 waiting") {
		t.Fatalf("status after --queue-only: %s%s", r.stdout, r.stderr)
	}
	// Queued and not yet sent: a failure again, for retry-failed to send.
	if r = binary(t, bin, env, "run", "bb", "--provider-url", "http://127.0.0.1:1", "--workers", "1", "--timeout", "2s"); r.code != cli.ExitItemProblems {
		t.Fatalf("run against a closed port: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = binary(t, bin, env, "--json", "retry-failed", "bb", "--safe-only", "--provider-url", srv.URL, "--workers", "2", "--budget", "1")
	var out struct {
		Retry struct{ Requests int } `json:"retry"`
		Run   struct {
			Paid, Done, Failed int
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || out.Retry.Requests != 2 || out.Run.Paid != 2 || out.Run.Done != 2 || out.Run.Failed != 0 {
		t.Fatalf("retry-failed --safe-only with run's flags: exit %d, %+v, %v\n%s%s", r.code, out, err, r.stdout, r.stderr)
	}
	if len(sb.Charges()) != 2 {
		t.Fatalf("the provider charged %d times for two recordings", len(sb.Charges()))
	}
	if r = binary(t, bin, env, "budget", "bb"); !strings.Contains(r.stdout, "budget $1.000000") {
		t.Errorf("the budget retry-failed was given: %s", r.stdout)
	}
}
