package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// FFmpegFile runs ffmpeg with args, writing path (its directory made if
// need be, an existing file overwritten), for a recording a test needs.
func FFmpegFile(t testing.TB, path string, args ...string) {
	t.Helper()
	ffmpeg := Require(t, FFmpeg)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ffmpeg, append(append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...), path)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %q: %v\n%s", cmd.Args[1:], err, out)
	}
}

// Tone writes a sine of freq Hz lasting d to path, encoded as path's
// extension says; args are ffmpeg's output options, such as "-ac", "1".
// Tones of different frequencies or lengths are different contents.
func Tone(t testing.TB, path string, freq int, d time.Duration, args ...string) {
	t.Helper()
	sine := "sine=frequency=" + strconv.Itoa(freq) + ":duration=" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	FFmpegFile(t, path, append([]string{"-f", "lavfi", "-i", sine}, args...)...)
}
