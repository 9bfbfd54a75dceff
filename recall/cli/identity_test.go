package cli_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testdb"
	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// TestRunsInPIDNamespacesPayOnce runs two `recall-archive run`s of one
// batch at once, each in a PID namespace of its own (as in two containers
// on one host: both are process 1 on the same host), then `retry-failed
// --safe-only`: every recording is charged once, and transcribed. Two
// rounds of 8 recordings per backend: before worker names had a random
// part, about one round in two charged a recording twice.
func TestRunsInPIDNamespacesPayOnce(t *testing.T) {
	t.Parallel()
	testkit.Long(t)
	if err := exec.Command("unshare", "--pid", "--fork", "--kill-child", "true").Run(); err != nil {
		t.Skipf("no PID namespaces here (unshare --pid: %v)", err)
	}
	bin := testkit.Binary(t, "cmd/recall-archive")
	rec := t.TempDir()
	const n = 8
	for i := range n {
		testkit.Tone(t, filepath.Join(rec, fmt.Sprintf("r%d.mp3", i)), 200+40*i, time.Second)
	}
	for _, b := range testdb.Backends() {
		for round := range 2 {
			t.Run(fmt.Sprintf("%s/%d", b.Name, round), func(t *testing.T) {
				sb := sandbox.New(sandbox.Options{})
				srv := httptest.NewServer(sb)
				defer srv.Close()
				defer sb.Close()
				db := b.DSN(t)
				env := append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
				if r := binary(t, bin, env, "--db", db, "add", "b", rec); r.code != 0 {
					t.Fatalf("add: %d\n%s", r.code, r.stderr)
				}
				args := []string{"--db", db, "run", "b", "--provider-url", srv.URL, "--workers", "4", "--timeout", "10s"}
				var wg sync.WaitGroup
				outs := make([]string, 2)
				for i := range outs {
					wg.Go(func() {
						cmd := exec.Command("unshare", append([]string{"--pid", "--fork", "--kill-child", bin}, args...)...)
						// Containers of their own: caches of their own too.
						cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
						out, _ := cmd.CombinedOutput()
						outs[i] = string(out)
					})
				}
				wg.Wait()
				retry := append([]string{"--db", db, "retry-failed", "b", "--safe-only"}, args[4:]...)
				r := binary(t, bin, env, retry...)
				charged := map[string]int{}
				for _, c := range sb.Charges() {
					charged[c.Tag]++
				}
				for key, k := range charged {
					if k > 1 {
						t.Errorf("%s charged %d times", key, k)
					}
				}
				if len(charged) != n || r.code != 0 || !strings.Contains(r.stdout+r.stderr, fmt.Sprintf("%d recordings done", n)) {
					t.Errorf("%d recordings charged of %d; retry-failed exited %d:\n%s%s\nthe two runs:\n%s\n%s", len(charged), n, r.code, r.stdout, r.stderr, outs[0], outs[1])
				}
			})
		}
	}
}
