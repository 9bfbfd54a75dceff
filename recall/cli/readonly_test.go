package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/cli"
	rec "github.com/rubicon-go/rubicon/recall/recording" // the tests name their tone helper recording
	"github.com/rubicon-go/rubicon/recall/store"
)

// TestRunTellsTheBatchAsItStands: a run names the batch's files that
// failed before it and how to retry them (it exited 0 saying "0
// waiting"); a request another run holds in flight is shown in flight,
// not waiting, by run and status; a search that only the sandbox's
// placeholders would answer says so.
func TestRunTellsTheBatchAsItStands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "gone.mp3"), 331, 2*time.Second)
	testkit.Tone(t, filepath.Join(dir, "held.mp3"), 449, 2*time.Second)
	testkit.Tone(t, filepath.Join(dir, "kept.mp3"), 563, 2*time.Second)
	db := filepath.Join(t.TempDir(), "r.db")
	env := map[string]string{cli.DBEnv: db, "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "add", "b", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(dir, "gone.mp3"))

	// Another run holds held.mp3's request in flight, its lease renewed.
	ctx := context.Background()
	a, err := recall.Open(ctx, db, recall.Options{Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sum, size, _ := recall.HashFile(filepath.Join(dir, "held.mp3"))
	chunks, err := a.Store().PlanChunks(ctx, []store.Chunk{{SHA256: sum, Transcriber: rec.Transcriber{Provider: "sandbox", Model: "whisper-1"}, Count: 1, Duration: time.Second}})
	if err != nil || size == 0 {
		t.Fatal(err)
	}
	if err := a.Store().OpenAccount(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	_, release, err := a.Store().Claim(ctx, chunks[0].Key, "other-run")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := a.Store().Send(ctx, "b", chunks[0].Key, "other-run", 100); err != nil {
		t.Fatal(err)
	}

	r := run(t, env, "run", "b", "--workers", "1")
	if r.code != cli.ExitItemProblems || !strings.Contains(r.stdout, "1 in flight") || !strings.Contains(r.stdout, "gone.mp3") ||
		!strings.Contains(r.stderr, "held.mp3\": in flight for another run") {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, env, "run", "b", "--workers", "1")
	if r.code != cli.ExitItemProblems || !strings.Contains(r.stdout, "failed before this run (1)") || !strings.Contains(r.stdout, "gone.mp3") ||
		!strings.Contains(r.stdout, "retry-failed b --safe-only") || !strings.Contains(r.stdout, "1 in flight") {
		t.Fatalf("a second run: exit %d; want the earlier failure named, with how to retry it, and the request in flight\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run(t, env, "status", "b"); !strings.Contains(r.stdout, "1 in flight") {
		t.Fatalf("status: %s", r.stdout)
	}
	r = run(t, env, "search", "segment")
	if !strings.Contains(r.stdout, "no matches") || !strings.Contains(r.stdout, "--include-sandbox") {
		t.Fatalf("search of a sandbox-only archive: %s%s", r.stdout, r.stderr)
	}
	if r = run(t, env, "search", "segment", "--include-sandbox"); strings.Contains(r.stdout, "no matches") {
		t.Fatalf("search --include-sandbox: %s%s", r.stdout, r.stderr)
	}
}

// TestReadOnlyArchiveAnswersReads runs the binary, as a user who cannot
// write the archive (nobody, when the tests run as root), against an
// archive in a read-only directory: every command that only reads it
// answers; one that would change it fails, saying it is read-only.
func TestReadOnlyArchiveAnswersReads(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t, "cmd/recall-archive")
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "a.mp3"), 300, time.Second)
	home := t.TempDir()
	db := filepath.Join(home, "r.db")
	env := map[string]string{cli.DBEnv: db, "XDG_CACHE_HOME": t.TempDir()}
	if r := run(t, env, "add", "b", dir); r.code != cli.ExitOK {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if r := run(t, env, "run", "b"); r.code != cli.ExitOK {
		t.Fatalf("run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	out := t.TempDir()
	for _, p := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), filepath.Dir(home), dir, filepath.Dir(dir), filepath.Dir(out)} {
		os.Chmod(p, 0o755)
	}
	os.Chmod(out, 0o777)
	os.Chmod(db, 0o444)
	os.Chmod(home, 0o555)
	t.Cleanup(func() { os.Chmod(home, 0o755) })
	asReader := func(args ...string) result {
		cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + out}
		if os.Getuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return result{exitCode(err), o.String(), e.String()}
	}
	if r := asReader("add", "b", dir); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "read-only") {
		t.Fatalf("add to a read-only archive: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"status", "b"}, {"estimate", "b"}, {"ambiguous", "b"}, {"search", "segment", "--include-sandbox"},
		{"export", "b", "--out", out, "--include-sandbox"}, {"budget", "b"}, {"speakers", "b", filepath.Join(dir, "a.mp3")},
	} {
		if r := asReader(args...); r.code != cli.ExitOK || strings.Contains(r.stderr, "writable") {
			t.Errorf("%q on a read-only archive: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*.txt")); len(files) != 1 {
		t.Errorf("export from a read-only archive wrote %v", files)
	}
}
