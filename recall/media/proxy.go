package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProxyRecipe names the audio proxy's format: the first audio track, mono,
// 16 kHz, MP3 at 32 kbit/s, with no metadata, written bit-exactly so that
// the same source and ffmpeg give the same bytes on every run.
const ProxyRecipe = "mp3-mono-16khz-32kbps-v1"

// ProxyBytesPerSecond is the proxy's size per second of audio.
const ProxyBytesPerSecond = 32000 / 8

// The proxy's MP3 frames: 576 samples at 16 kHz, 144 bytes at 32 kbit/s;
// the encoder adds its delay of 1105 samples before the audio, and pads
// the last frame.
const (
	frameSamples = 576
	frameBytes   = 144
	encoderDelay = 1105
	proxyRate    = 16000
)

// ProxySize returns the size of the audio proxy of d of audio, or a frame
// more: what the proxy will hold, for pricing a recording before its proxy
// is made.
func ProxySize(d time.Duration) int64 {
	samples := (d.Microseconds()*proxyRate + 999_999) / 1_000_000
	frames := (samples+encoderDelay+frameSamples-1)/frameSamples + 1
	return frames * frameBytes
}

var versions sync.Map // ffmpeg command → version line

// Version returns ffmpeg's version line, such as "ffmpeg version 5.1.9-0+deb12u1".
func (t Tools) Version(ctx context.Context) (string, error) {
	if v, ok := versions.Load(t.ffmpeg()); ok {
		return v.(string), nil
	}
	out, err := exec.CommandContext(ctx, t.ffmpeg(), "-hide_banner", "-version").Output()
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("%w: %s was not found on PATH (install ffmpeg)", ErrNotInstalled, t.ffmpeg())
	}
	if err != nil {
		return "", fmt.Errorf("media: %s -version: %w", t.ffmpeg(), err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSpace(strings.SplitN(line, " Copyright", 2)[0])
	versions.Store(t.ffmpeg(), line)
	return line, nil
}

// Proxy writes the audio proxy of src to dst (through a temporary file, so
// that dst is whole or absent).
func (t Tools) Proxy(ctx context.Context, src, dst string) error {
	return t.run(ctx, dst, "-i", "file:"+src, "-map", "0:a:0", "-vn", "-ac", "1", "-ar", "16000",
		"-c:a", "libmp3lame", "-b:a", "32k")
}

// Cut writes the part of the proxy src from start for length to dst,
// copying MP3 frames without re-encoding.
func (t Tools) Cut(ctx context.Context, src, dst string, start, length time.Duration) error {
	return t.run(ctx, dst, "-ss", seconds(start), "-i", "file:"+src, "-t", seconds(length), "-c", "copy")
}

func (t Tools) run(ctx context.Context, dst string, args ...string) error {
	tmp := dst + ".partial"
	full := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}, args...)
	full = append(full, "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:a", "+bitexact",
		"-id3v2_version", "0", "-write_xing", "0", "-f", "mp3", "file:"+tmp)
	cmd := exec.CommandContext(ctx, t.ffmpeg(), full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%w: %s was not found on PATH (install ffmpeg)", ErrNotInstalled, t.ffmpeg())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("media: ffmpeg could not make %s: %s", dst, lastLine(stderr.String(), err))
	}
	return os.Rename(tmp, dst)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }

func (t Tools) ffmpeg() string {
	if t.FFmpeg != "" {
		return t.FFmpeg
	}
	return "ffmpeg"
}
