package media_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/recall/media"
)

// countingFFmpeg is an ffmpeg that notes each conversion in log, takes a
// while, and then runs the real one.
func countingFFmpeg(t *testing.T, log string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ffmpeg")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$*\" in *-version*) exec ffmpeg \"$@\";; esac\necho $$ >> %q\nsleep 0.3\nexec ffmpeg \"$@\"\n", log)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProxyIsMadeOnceByConcurrentWriters has eight writers ask for one
// proxy at once: ffmpeg runs once, every writer gets the whole proxy, and
// no partial file is left.
func TestProxyIsMadeOnceByConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := source(t, 3*time.Second)
	log := filepath.Join(t.TempDir(), "log")
	tools := media.Tools{FFmpeg: countingFFmpeg(t, log)}
	dir := t.TempDir()
	dst := filepath.Join(dir, "p.mp3")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = tools.Proxy(ctx, src, dst) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	runs, _ := os.ReadFile(log)
	if n := strings.Count(string(runs), "\n"); n != 1 {
		t.Fatalf("ffmpeg ran %d times for one proxy asked for by 8 writers", n)
	}
	alone := filepath.Join(t.TempDir(), "alone.mp3")
	if err := (media.Tools{}).Proxy(ctx, src, alone); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	want, _ := os.ReadFile(alone)
	if !bytes.Equal(got, want) {
		t.Fatalf("the proxy made among concurrent writers differs from one made alone (%d and %d bytes)", len(got), len(want))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.partial")); len(left) > 0 {
		t.Fatalf("partial files left: %v", left)
	}
}

// TestTryProxyIsBusyWhileAnotherWriterWorks: a second writer is told at
// once that the proxy is being made, and is never handed a part of it.
func TestTryProxyIsBusyWhileAnotherWriterWorks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := source(t, 2*time.Second)
	tools := media.Tools{FFmpeg: countingFFmpeg(t, filepath.Join(t.TempDir(), "log"))}
	dst := filepath.Join(t.TempDir(), "p.mp3")
	first := make(chan error, 1)
	go func() { first <- tools.Proxy(ctx, src, dst) }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if left, _ := filepath.Glob(dst + ".*.partial"); len(left) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first writer made no partial file")
		}
	}
	if err := tools.TryProxy(ctx, src, dst); !errors.Is(err, media.ErrBusy) {
		t.Fatalf("TryProxy while another writer works: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("the proxy exists while its writer works: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := tools.TryProxy(ctx, src, dst); err != nil {
		t.Fatalf("TryProxy once the proxy is made: %v", err)
	}
}

// TestCutsJoinInWholeFrames cuts a proxy in three at instants that fall
// inside frames: the chunks are whole frames, joined they are the proxy
// byte for byte, and each lasts, for ffprobe, what its frames last, so
// their times neither overlap nor leave a gap.
func TestCutsJoinInWholeFrames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tools media.Tools
	dir := t.TempDir()
	proxy := filepath.Join(dir, "p.mp3")
	if err := tools.Proxy(ctx, source(t, 7*time.Second), proxy); err != nil {
		t.Fatal(err)
	}
	frames, err := media.ReadFrames(proxy)
	if err != nil {
		t.Fatal(err)
	}
	if frames.Each != 36*time.Millisecond || frames.Count() < 190 {
		t.Fatalf("proxy frames: %d of %s", frames.Count(), frames.Each)
	}
	cuts := []time.Duration{0, 2345 * time.Millisecond, 4710 * time.Millisecond, frames.Duration()}
	var joined []byte
	var end time.Duration
	for i := range 3 {
		part := filepath.Join(dir, fmt.Sprintf("c%d.mp3", i))
		if err := tools.Cut(ctx, proxy, part, cuts[i], cuts[i+1]-cuts[i]); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(part)
		joined = append(joined, b...)
		pf, err := media.ReadFrames(part)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		start := time.Duration(frames.Index(cuts[i])) * frames.Each
		if start != end {
			t.Fatalf("chunk %d starts at %s; the previous one ended at %s", i, start, end)
		}
		end = start + pf.Duration()
		info, err := tools.Probe(ctx, part)
		if err != nil || info.Duration != pf.Duration() {
			t.Fatalf("chunk %d: ffprobe says %s, its %d frames last %s (%v)", i, info.Duration, pf.Count(), pf.Duration(), err)
		}
	}
	whole, _ := os.ReadFile(proxy)
	if !bytes.Equal(joined, whole) {
		t.Fatalf("the chunks joined are %d bytes, the proxy %d", len(joined), len(whole))
	}
}

// TestReadFramesRefusesWhatIsNotAPlainMP3 names the file and where it
// goes wrong.
func TestReadFramesRefusesWhatIsNotAPlainMP3(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.mp3")
	os.WriteFile(junk, []byte("ID3 this is not a frame"), 0o644)
	if _, err := media.ReadFrames(junk); err == nil || !strings.Contains(err.Error(), junk) {
		t.Fatalf("junk: %v", err)
	}
	proxy := filepath.Join(dir, "p.mp3")
	if err := (media.Tools{}).Proxy(context.Background(), source(t, time.Second), proxy); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(proxy)
	short := filepath.Join(dir, "short.mp3")
	os.WriteFile(short, b[:len(b)-10], 0o644)
	if _, err := media.ReadFrames(short); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("a proxy cut short: %v", err)
	}
}

// TestCleanPartialsKeepsThoseBeingWritten: a partial file whose writer is
// gone is removed; one whose writer still works is kept.
func TestCleanPartialsKeepsThoseBeingWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	stale := filepath.Join(dir, "a.mp3.4242-1.partial")
	os.WriteFile(stale, []byte("left by a killed run"), 0o600)
	src := source(t, 2*time.Second)
	tools := media.Tools{FFmpeg: countingFFmpeg(t, filepath.Join(t.TempDir(), "log"))}
	done := make(chan error, 1)
	go func() { done <- tools.Proxy(ctx, src, filepath.Join(dir, "b.mp3")) }()
	var live []string
	for deadline := time.Now().Add(5 * time.Second); len(live) == 0; time.Sleep(5 * time.Millisecond) {
		live, _ = filepath.Glob(filepath.Join(dir, "b.mp3.*.partial"))
		if time.Now().After(deadline) {
			t.Fatal("the writer made no partial file")
		}
	}
	n, err := media.CleanPartials(dir)
	if err != nil || n != 1 {
		t.Fatalf("CleanPartials removed %d (%v), want the stale one", n, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("the stale partial file is still there")
	}
	if _, err := os.Stat(live[0]); err != nil {
		t.Fatalf("the partial file being written was removed: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestEmptyProxyIsAnError: an ffmpeg that writes nothing and says nothing
// leaves no proxy to plan from.
func TestEmptyProxyIsAnError(t *testing.T) {
	t.Parallel()
	silent := filepath.Join(t.TempDir(), "ffmpeg")
	// The last argument is the output: create it empty.
	os.WriteFile(silent, []byte("#!/bin/sh\nfor a; do out=$a; done\n: > \"${out#file:}\"\n"), 0o755)
	dst := filepath.Join(t.TempDir(), "p.mp3")
	err := (media.Tools{FFmpeg: silent}).Proxy(context.Background(), source(t, time.Second), dst)
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty proxy: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("an empty proxy was kept: %v", err)
	}
}
