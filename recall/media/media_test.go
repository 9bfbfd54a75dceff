package media_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/media"
)

func source(t *testing.T, d time.Duration) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src.wav")
	testkit.Tone(t, p, 500, d, "-ac", "2", "-ar", "44100")
	return p
}

func TestProxyIsByteIdenticalAndCuts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tools media.Tools
	src := source(t, 6*time.Second)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.mp3"), filepath.Join(dir, "b.mp3")
	if err := tools.Proxy(ctx, src, a); err != nil {
		t.Fatal(err)
	}
	if err := tools.Proxy(ctx, src, b); err != nil {
		t.Fatal(err)
	}
	pa, _ := os.ReadFile(a)
	pb, _ := os.ReadFile(b)
	if !bytes.Equal(pa, pb) || len(pa) == 0 {
		t.Fatalf("two proxies of one source differ (%d and %d bytes)", len(pa), len(pb))
	}
	if n := len(pa); n < 6*media.ProxyBytesPerSecond || n > 6*media.ProxyBytesPerSecond+2000 {
		t.Fatalf("proxy of 6 s is %d bytes, want about %d (32 kbit/s)", n, 6*media.ProxyBytesPerSecond)
	}
	info, err := tools.Probe(ctx, a)
	if err != nil || info.Format != "mp3" || info.Video {
		t.Fatalf("probe of the proxy: %+v, %v", info, err)
	}
	cut := filepath.Join(dir, "cut.mp3")
	if err := tools.Cut(ctx, a, cut, 2*time.Second, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	ci, err := tools.Probe(ctx, cut)
	if err != nil || ci.Duration < 2900*time.Millisecond || ci.Duration > 3200*time.Millisecond {
		t.Fatalf("a 3 s cut: %+v, %v", ci, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.partial")); len(left) > 0 {
		t.Fatalf("a partial file was left behind")
	}
	if v, err := tools.Version(ctx); err != nil || !strings.HasPrefix(v, "ffmpeg version") {
		t.Fatalf("version: %q, %v", v, err)
	}
}

func TestMissingTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	none := media.Tools{FFprobe: "rubicon-no-ffprobe", FFmpeg: "rubicon-no-ffmpeg"}
	if _, err := none.Probe(ctx, "x.mp3"); !errors.Is(err, media.ErrNotInstalled) || !strings.Contains(err.Error(), "install ffmpeg") {
		t.Errorf("probe without ffprobe: %v", err)
	}
	if err := none.Proxy(ctx, "x.mp3", filepath.Join(t.TempDir(), "p.mp3")); !errors.Is(err, media.ErrNotInstalled) {
		t.Errorf("proxy without ffmpeg: %v", err)
	}
}

func TestProbeTellsMediaFromOtherFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tools media.Tools
	dir := t.TempDir()
	text := filepath.Join(dir, "-looks like a flag.mp3")
	os.WriteFile(text, []byte("plain text"), 0o644)
	if _, err := tools.Probe(ctx, text); !errors.Is(err, media.ErrNotMedia) || !strings.Contains(err.Error(), text) {
		t.Errorf("a text file: %v", err)
	}
	if err := tools.Proxy(ctx, text, filepath.Join(dir, "p.mp3")); err == nil || !strings.Contains(err.Error(), "p.mp3") {
		t.Errorf("a proxy of a text file: %v", err)
	}
}

// TestProxyTellsItsProgress: with WithConverted, the making of a proxy
// tells how much audio ffmpeg has converted, from ffmpeg's own progress
// lines, up to the recording's length; the proxy is the same bytes as one
// made without.
func TestProxyTellsItsProgress(t *testing.T) {
	var tools media.Tools
	src := source(t, 20*time.Second)
	dir := t.TempDir()
	var seen []time.Duration
	ctx := media.WithConverted(context.Background(), func(done time.Duration) { seen = append(seen, done) })
	with, without := filepath.Join(dir, "with.mp3"), filepath.Join(dir, "without.mp3")
	if err := tools.Proxy(ctx, src, with); err != nil {
		t.Fatal(err)
	}
	if err := tools.Proxy(context.Background(), src, without); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("no progress told")
	}
	last := seen[len(seen)-1]
	if last < 19*time.Second || last > 21*time.Second {
		t.Errorf("the last progress is %s of a 20 s recording: %v", last, seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("progress went back: %v", seen)
		}
	}
	a, _ := os.ReadFile(with)
	b, _ := os.ReadFile(without)
	if !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("the proxy made with progress differs from the one made without (%d and %d bytes)", len(a), len(b))
	}
}
