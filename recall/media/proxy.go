package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// ProxyFrames returns the frames of the audio proxy of d of audio, or a
// frame more: what the proxy will hold, for pricing a recording before its
// proxy is made.
func ProxyFrames(d time.Duration) Frames {
	samples := (d.Microseconds()*proxyRate + 999_999) / 1_000_000
	n := (samples+encoderDelay+frameSamples-1)/frameSamples + 1
	f := Frames{Offsets: make([]int64, n+1), Each: frameSamples * time.Second / proxyRate}
	for i := range f.Offsets {
		f.Offsets[i] = int64(i) * frameBytes
	}
	return f
}

var versions sync.Map // ffmpeg command → version line

// Version returns ffmpeg's version line, such as "ffmpeg version 5.1.9-0+deb12u1".
func (t Tools) Version(ctx context.Context) (string, error) {
	if v, ok := versions.Load(t.ffmpeg()); ok {
		return v.(string), nil
	}
	cmd := exec.CommandContext(ctx, t.ffmpeg(), "-hide_banner", "-version")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := runTied(cmd)
	out := stdout.Bytes()
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("%w: %s was not found on PATH (install ffmpeg)", ErrNotInstalled, t.ffmpeg())
	}
	if err != nil {
		return "", fmt.Errorf("%s -version: %w", t.ffmpeg(), err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSpace(strings.SplitN(line, " Copyright", 2)[0])
	versions.Store(t.ffmpeg(), line)
	return line, nil
}

// Proxy writes the audio proxy of src to dst, unless dst exists. Each
// writer writes a partial file of its own and renames it to dst when it is
// whole, so that dst is whole or absent; writers of one dst, in this
// process or others on the machine, take turns, so that it is made once:
// Proxy waits for another writer to finish.
func (t Tools) Proxy(ctx context.Context, src, dst string) error {
	return t.proxy(ctx, src, dst, true)
}

// TryProxy is Proxy, but returns an error wrapping ErrBusy at once when
// another writer is making dst.
func (t Tools) TryProxy(ctx context.Context, src, dst string) error {
	return t.proxy(ctx, src, dst, false)
}

func (t Tools) proxy(ctx context.Context, src, dst string, wait bool) error {
	return writeOnce(ctx, dst, wait, t.LockStale, func(tmp string) error {
		return t.run(ctx, dst, tmp, "-i", "file:"+src, "-map", "0:a:0", "-vn", "-ac", "1", "-ar", "16000",
			"-c:a", "libmp3lame", "-b:a", "32k")
	})
}

// Converted is told, as ffmpeg makes a proxy, how much of the recording's
// audio it has converted so far.
type Converted func(done time.Duration)

type convertedKey struct{}

// WithConverted returns ctx with c, which the making of proxies under ctx
// tells of its progress, from ffmpeg's own (-progress).
func WithConverted(ctx context.Context, c Converted) context.Context {
	return context.WithValue(ctx, convertedKey{}, c)
}

// progressWriter reads ffmpeg's -progress lines (key=value), telling
// converted each out_time_us.
type progressWriter struct {
	converted Converted
	line      []byte
}

func (w *progressWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b != '\n' {
			if len(w.line) < 256 {
				w.line = append(w.line, b)
			}
			continue
		}
		if v, ok := strings.CutPrefix(string(w.line), "out_time_us="); ok {
			if us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && us >= 0 {
				w.converted(time.Duration(us) * time.Microsecond)
			}
		}
		w.line = w.line[:0]
	}
	return len(p), nil
}

// Cut writes to dst the whole frames of the MP3 file src (a proxy) from
// the frame nearest to start to the one nearest to start+length, copying
// their bytes, unless dst exists. Chunks cut at the same instants from one
// proxy thus join without overlap or gap. Writers take turns as in Proxy.
func (t Tools) Cut(ctx context.Context, src, dst string, start, length time.Duration) error {
	frames, err := ReadFrames(src)
	if err != nil {
		return err
	}
	first, end := frames.Index(start), frames.Index(start+length)
	if end <= first {
		return fmt.Errorf("no whole frame of %s between %s and %s (it lasts %s)", src, start, start+length, frames.Duration())
	}
	return writeOnce(ctx, dst, true, t.LockStale, func(tmp string) error {
		return copyRange(src, tmp, frames.Offsets[first], frames.Offsets[end])
	})
}

// copyRange copies the bytes [from, to) of src to a new file dst.
func copyRange(src, dst string, from, to int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, from, to-from)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// run runs ffmpeg with args to write the MP3 tmp, on behalf of dst.
func (t Tools) run(ctx context.Context, dst, tmp string, args ...string) error {
	full := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}, args...)
	full = append(full, "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:a", "+bitexact",
		"-id3v2_version", "0", "-write_xing", "0", "-f", "mp3", "file:"+tmp)
	converted, _ := ctx.Value(convertedKey{}).(Converted)
	if converted != nil {
		full = append([]string{"-progress", "pipe:1", "-nostats"}, full...)
	}
	cmd := exec.CommandContext(ctx, t.ffmpeg(), full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if converted != nil {
		cmd.Stdout = &progressWriter{converted: converted}
	}
	err := runTied(cmd)
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%w: %s was not found on PATH (install ffmpeg)", ErrNotInstalled, t.ffmpeg())
	}
	if err != nil {
		return fmt.Errorf("ffmpeg could not make %s: %s", dst, lastLine(stderr.String(), err))
	}
	return nil
}

func (t Tools) ffmpeg() string {
	if t.FFmpeg != "" {
		return t.FFmpeg
	}
	return "ffmpeg"
}
