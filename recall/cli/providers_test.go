package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestRefusedKeyStopsTheRun: a provider that refuses the key (401, in
// OpenAI's error object) gets one request, not one per recording; the
// run fails naming the variable that holds the key and how to go on.
func TestRefusedKeyStopsTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 3 {
		testkit.Tone(t, filepath.Join(dir, fmt.Sprintf("r%d.mp3", i)), 300+100*i, time.Second)
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
	}))
	defer srv.Close()
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": t.TempDir(), "OPENAI_API_KEY": "sk-bad"}
	if r := run(t, env, "add", "b", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	for workers := 1; workers <= 2; workers++ {
		requests.Store(0)
		r := run(t, env, "run", "b", "--provider", "openai", "--provider-url", srv.URL+"/v1", "--workers", fmt.Sprint(workers))
		if r.code != cli.ExitFailure || !strings.Contains(r.stdout, "the API key in $OPENAI_API_KEY was refused") ||
			!strings.Contains(r.stdout, "invalid_api_key") || !strings.Contains(r.stdout, "retry-failed b --safe-only --provider openai") {
			t.Fatalf("run --workers %d with a refused key: exit %d\n%s%s", workers, r.code, r.stdout, r.stderr)
		}
		// Requests already in flight when the refusal came may finish; none
		// starts after it.
		if n := requests.Load(); n < 1 || n > int32(workers) {
			t.Fatalf("run --workers %d: the provider got %d requests; want the run to stop at the first refusal", workers, n)
		}
		run(t, env, "retry-failed", "b", "--safe-only", "--queue-only")
	}
}
