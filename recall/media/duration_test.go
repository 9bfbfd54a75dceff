package media_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall/media"
)

// TestAudioDurationAndProxyFrames: a truncated MP3's header claims the
// whole recording, its audio is what is left; the frames ProxyFrames
// predicts from the audio's length are those of the proxy, or a frame
// more, for a truncated MP3 and for a 2 s file.
func TestAudioDurationAndProxyFrames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tools media.Tools
	dir := t.TempDir()
	long := filepath.Join(dir, "long.mp3")
	testkit.Tone(t, long, 440, 68*time.Second, "-b:a", "128k")
	data, err := os.ReadFile(long)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.mp3")
	os.WriteFile(truncated, data[:200_000], 0o644)
	info, err := tools.Probe(ctx, truncated)
	if err != nil {
		t.Fatal(err)
	}
	audio, err := tools.AudioDuration(ctx, truncated)
	if err != nil || audio < 12*time.Second || audio > 13*time.Second || info.Duration < 60*time.Second {
		t.Fatalf("truncated MP3: header %s, audio %s, %v; want about 68 s and 12.5 s", info.Duration, audio, err)
	}
	for name, src := range map[string]string{"truncated": truncated, "2 s": source(t, 2*time.Second)} {
		d, err := tools.AudioDuration(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		proxy := filepath.Join(dir, "proxy-"+filepath.Base(src))
		if err := tools.Proxy(ctx, src, proxy); err != nil {
			t.Fatal(err)
		}
		frames, err := media.ReadFrames(proxy)
		if err != nil {
			t.Fatal(err)
		}
		predicted := media.ProxyFrames(d)
		if n, p := frames.Count(), predicted.Count(); p < n || p > n+1 || predicted.Each != frames.Each || predicted.Offsets[p] < frames.Offsets[n] {
			t.Errorf("%s (%s of audio): the proxy holds %d frames of %s, %d bytes; predicted %d of %s", name, d, n, frames.Each, frames.Offsets[n], p, predicted.Each)
		}
	}
}
