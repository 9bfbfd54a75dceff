package testkit_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// childEnv, set, makes TestMissingToolChild ask for a tool that no machine
// has.
const childEnv = "TESTKIT_CHILD"

var fake = testkit.Tool{Name: "no-such-tool", Install: "apt-get install no-such-tool"}

// TestMissingToolChild is run by TestMissingToolSkipsOrFails in a test
// process of its own.
func TestMissingToolChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestMissingToolSkipsOrFails")
	}
	testkit.Require(t, fake, "rubicon-no-such-command")
	t.Log("not reached")
}

// TestMissingToolSkipsOrFails runs a test that needs a tool no machine
// has, under each setting of RUBICON_TEST_REQUIRE: it skips with the
// command that installs the tool, unless the setting names the tool or is
// "all", when it fails.
func TestMissingToolSkipsOrFails(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		require string
		fails   bool
	}{
		{"", false},
		{"ffmpeg", false},
		{"ffmpeg, postgres", false},
		{"all", true},
		{"no-such-tool", true},
		{"ffmpeg, no-such-tool", true},
	} {
		t.Run("require="+c.require, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissingToolChild$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"=1", testkit.RequireEnv+"="+c.require)
			out, _, code := testkit.Run(t, cmd)
			if strings.Contains(out, "not reached") {
				t.Fatalf("the test went on without the tool:\n%s", out)
			}
			if !strings.Contains(out, "rubicon-no-such-command is not on the PATH; install it with: apt-get install no-such-tool") {
				t.Errorf("the output does not say what is missing and how to install it:\n%s", out)
			}
			switch {
			case c.fails && (code == 0 || !strings.Contains(out, "--- FAIL: TestMissingToolChild")):
				t.Errorf("exit %d; want a failure:\n%s", code, out)
			case !c.fails && (code != 0 || !strings.Contains(out, "--- SKIP: TestMissingToolChild")):
				t.Errorf("exit %d; want a skip:\n%s", code, out)
			}
		})
	}
}

// TestBinaryIsBuiltOnce asks for one program from many tests at once: each
// gets the same file, built by the first.
func TestBinaryIsBuiltOnce(t *testing.T) {
	t.Parallel()
	paths := make([]string, 8)
	var wg sync.WaitGroup
	for i := range paths {
		wg.Go(func() { paths[i] = testkit.Binary(t, "internal/testkit/testdata/hello") })
	}
	wg.Wait()
	first, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("two builds: %s and %s", paths[0], p)
		}
	}
	again := testkit.Binary(t, "internal/testkit/testdata/hello")
	if st, err := os.Stat(again); err != nil || again != paths[0] || !st.ModTime().Equal(first.ModTime()) {
		t.Fatalf("asked again, got %s (%v), built anew", again, err)
	}
}

// TestRunCapturesOutputAndExitCode runs a real program that writes to both
// streams and exits with 3.
func TestRunCapturesOutputAndExitCode(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "internal/testkit/testdata/hello")
	stdout, stderr, code := testkit.Run(t, exec.Command(bin, "to stdout", "to stderr", "3"))
	if stdout != "to stdout" || stderr != "to stderr" || code != 3 {
		t.Fatalf("stdout %q, stderr %q, exit %d", stdout, stderr, code)
	}
}

// TestStartStopsTheProcessWhenTheTestEnds starts a program that would run
// for a minute: the end of the subtest interrupts it.
func TestStartStopsTheProcessWhenTheTestEnds(t *testing.T) {
	t.Parallel()
	sleep := testkit.Require(t, testkit.Tool{Name: "sleep", Install: "apt-get install coreutils"})
	var p *testkit.Process
	t.Run("running", func(t *testing.T) {
		p = testkit.Start(t, exec.Command(sleep, "60"))
		if p.Exited() {
			t.Fatal("sleep ended at once")
		}
	})
	if !p.Exited() {
		t.Fatal("the process outlived its test")
	}
}
