// Package media runs ffprobe and ffmpeg for recall-archive: it tells media
// from other files by probing them, and makes the audio proxies that are
// sent for transcription.
package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled reports that ffprobe or ffmpeg is missing. Failures it
// causes happen before any paid request, so they are safe to retry once the
// tool is installed.
var ErrNotInstalled = errors.New("ffmpeg is not installed")

// ErrNotMedia reports a file that ffprobe cannot read as audio or video.
var ErrNotMedia = errors.New("not a media file")

// ErrNoAudio reports a media file without an audio track.
var ErrNoAudio = errors.New("no audio track")

// Tools locates ffprobe and ffmpeg. The zero value looks them up on PATH.
type Tools struct {
	// FFprobe and FFmpeg are the commands; empty means "ffprobe" and
	// "ffmpeg" on PATH.
	FFprobe, FFmpeg string
	// Timeout bounds one probe. Default 60 s.
	Timeout time.Duration
	// LockStale is how long the writer of a proxy or a chunk may show no
	// sign of life (a process stopped, say) before a writer waiting for it
	// takes its work over. Default 30 s.
	LockStale time.Duration
}

// Info is what probing found.
type Info struct {
	// Format is ffprobe's format name, such as "wav" or "mov,mp4,m4a,3gp,3g2,mj2".
	Format string
	// Duration is the length of the media.
	Duration time.Duration
	// Video reports a video track beside the audio.
	Video bool
}

func (t Tools) ffprobe() string {
	if t.FFprobe != "" {
		return t.FFprobe
	}
	return "ffprobe"
}

// Probe inspects path. It returns an error wrapping ErrNotInstalled when
// ffprobe is missing, ErrNotMedia when the file is not media ffprobe can
// read, and ErrNoAudio when it has no audio track; each says which file.
func (t Tools) Probe(ctx context.Context, path string) (Info, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// "file:" keeps a name that starts with a dash or names a protocol
	// from being read as anything but a file.
	cmd := exec.CommandContext(ctx, t.ffprobe(), "-v", "error", "-show_entries",
		"format=duration,format_name:stream=codec_type", "-of", "json", "file:"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := runTied(cmd)
	if errors.Is(err, exec.ErrNotFound) {
		return Info{}, fmt.Errorf("%w: %s was not found on PATH (install ffmpeg)", ErrNotInstalled, t.ffprobe())
	}
	if ctx.Err() != nil {
		return Info{}, fmt.Errorf("probing %s took longer than %s", path, timeout)
	}
	if err != nil {
		detail := strings.TrimPrefix(lastLine(stderr.String(), err), "file:"+path+": ")
		return Info{}, fmt.Errorf("%w: ffprobe cannot read %s (%s)", ErrNotMedia, path, detail)
	}
	var out struct {
		Streams []struct {
			CodecType string `json:"codec_type"`
		} `json:"streams"`
		Format struct {
			Name     string `json:"format_name"`
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return Info{}, fmt.Errorf("probing %s: unreadable ffprobe output: %v", path, err)
	}
	info := Info{Format: out.Format.Name}
	audio := false
	for _, s := range out.Streams {
		switch s.CodecType {
		case "audio":
			audio = true
		case "video":
			info.Video = true
		}
	}
	if !audio {
		return info, fmt.Errorf("%w: %s (a %s file) has no audio to transcribe", ErrNoAudio, path, info.Format)
	}
	if secs, err := strconv.ParseFloat(out.Format.Duration, 64); err == nil && secs > 0 {
		info.Duration = time.Duration(secs * float64(time.Second))
	}
	return info, nil
}

// AudioDuration returns the length of path's first audio track, as its
// packets say when read to the end: Probe's duration is the container's
// header's, which can say much more (a truncated MP3 keeps the length of
// the whole file), and a provider bills the audio it gets. The packets are
// copied, not decoded.
func (t Tools) AudioDuration(ctx context.Context, path string) (time.Duration, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.ffmpeg(), "-hide_banner", "-nostdin", "-v", "error", "-i", "file:"+path,
		"-map", "0:a:0", "-c", "copy", "-f", "null", "-progress", "pipe:1", "-")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := runTied(cmd); err != nil {
		return 0, err
	}
	out := stdout.Bytes()
	var us int64 = -1
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "out_time_us="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				us = n
			}
		}
	}
	if us <= 0 {
		return 0, errors.New("ffmpeg did not say how long the audio is")
	}
	return time.Duration(us) * time.Microsecond, nil
}

// lastLine returns the last non-empty line of ffmpeg's error output, which
// says what went wrong, or err if there is none.
func lastLine(s string, err error) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}
