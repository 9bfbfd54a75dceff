package recall_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/recording"
)

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// folder builds a folder of recordings with every kind of trouble in it.
func folder(t testing.TB) string {
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "speech.mp3"), 440, 2*time.Second, "-ac", "1")
	speech, _ := os.ReadFile(filepath.Join(dir, "speech.mp3"))
	write(t, filepath.Join(dir, "interviews", "copy with spaces\nand a newline, é 日本.mp3"), speech)
	testkit.FFmpegFile(t, filepath.Join(dir, "interviews", "video.mp4"),
		"-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=5", "-f", "lavfi", "-i", "sine=duration=1", "-shortest")
	testkit.FFmpegFile(t, filepath.Join(dir, "interviews", "silent.mp4"), "-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=5")
	video, _ := os.ReadFile(filepath.Join(dir, "interviews", "video.mp4"))
	write(t, filepath.Join(dir, "interviews", "truncated.mp4"), video[:len(video)/3])
	write(t, filepath.Join(dir, "text.mp3"), []byte("this is not audio\n"))
	write(t, filepath.Join(dir, "empty.wav"), nil)
	write(t, filepath.Join(dir, "notes.txt"), []byte("notes"))
	junk := make([]byte, 4096)
	rand.Read(junk)
	write(t, filepath.Join(dir, "unknown.bin"), junk)
	os.Symlink(dir, filepath.Join(dir, "interviews", "loop"))
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling"))
	return dir
}

func openArchive(t testing.TB, opts recall.Options) *recall.Archive {
	t.Helper()
	a, err := recall.Open(context.Background(), filepath.Join(t.TempDir(), "recall.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestAddRecordsMediaOncePerContent(t *testing.T) {
	t.Parallel()
	dir := folder(t)
	a := openArchive(t, recall.Options{})
	ctx := context.Background()

	rep, err := a.Add(ctx, "b1", []string{dir}, recall.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 3 || rep.NewContents != 2 || rep.Skipped != 2 || rep.Unchanged != 0 {
		t.Errorf("report %+v: want 3 added (2 new contents), 2 skipped", rep)
	}
	problems := map[string]recall.Problem{}
	for _, p := range rep.Problems {
		problems[filepath.Base(p.Path)] = p
	}
	for name, want := range map[string]string{
		"silent.mp4":    "no audio",
		"text.mp3":      "ffprobe cannot read",
		"empty.wav":     "ffprobe cannot read",
		"truncated.mp4": "ffprobe cannot read",
		"loop":          "symbolic link loop",
		"dangling":      "broken symbolic link",
	} {
		p, ok := problems[name]
		if !ok || !strings.Contains(p.Error, want) || p.State != recording.Rejected {
			t.Errorf("%s: problem %+v, want rejected with %q", name, p, want)
		}
		delete(problems, name)
	}
	if len(problems) != 0 {
		t.Errorf("unexpected problems: %+v", problems)
	}

	st, err := a.Status(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Items[recording.Added] != 3 || st.Items[recording.Rejected] != 4 || st.Contents != 2 {
		t.Errorf("status %+v", st)
	}
	if st.Duration < 2900*time.Millisecond || st.Duration > 3200*time.Millisecond {
		t.Errorf("duration %s, want about 3 s (2 s of speech, 1 s of video, the copy not counted twice)", st.Duration)
	}

	// Adding again changes nothing; another batch shares the contents.
	rep, _ = a.Add(ctx, "b1", []string{dir}, recall.AddOptions{})
	if rep.Added != 0 || rep.Unchanged != 3 {
		t.Errorf("second add: %+v, want 3 unchanged", rep)
	}
	// From interviews/, the loop link leads up to the whole folder once.
	rep, _ = a.Add(ctx, "b2", []string{filepath.Join(dir, "interviews")}, recall.AddOptions{Workers: 1})
	if rep.Added != 3 || rep.NewContents != 0 {
		t.Errorf("another batch: %+v, want 3 added, no new content", rep)
	}
}

// TestAddWithoutFFmpeg: a missing ffprobe is a failure before any paid
// request, recorded per item; once ffmpeg is there, the items go through.
func TestAddWithoutFFmpeg(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "speech.mp3"), 440, 1*time.Second)
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "recall.db")

	a, err := recall.Open(ctx, dbPath, recall.Options{Tools: media.Tools{FFprobe: "rubicon-no-such-ffprobe"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Add(ctx, "b", []string{dir}, recall.AddOptions{})
	a.Close()
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].State != recording.Failed || !strings.Contains(rep.Problems[0].Error, "install ffmpeg") {
		t.Fatalf("add without ffprobe: %+v, %v", rep, err)
	}

	a2, err := recall.Open(ctx, dbPath, recall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	rep, err = a2.Add(ctx, "b", []string{dir}, recall.AddOptions{})
	if err != nil || rep.Added != 1 || len(rep.Problems) != 0 {
		t.Fatalf("add with ffprobe: %+v, %v", rep, err)
	}
	st, _ := a2.Status(ctx, "b")
	if st.Items[recording.Added] != 1 || st.Items[recording.Failed] != 0 || st.Duration < 900*time.Millisecond {
		t.Fatalf("status after ffmpeg came: %+v", st)
	}
}

func TestAddRefusesBadBatchNames(t *testing.T) {
	t.Parallel()
	a := openArchive(t, recall.Options{})
	for _, name := range []string{"", "a/b", " padded", "line\nbreak"} {
		if _, err := a.Add(context.Background(), name, []string{t.TempDir()}, recall.AddOptions{}); err == nil {
			t.Errorf("batch name %q accepted", name)
		}
	}
	if _, err := a.Status(context.Background(), "never-added"); err == nil || !strings.Contains(err.Error(), "never-added") {
		t.Errorf("status of an unknown batch: %v", err)
	}
}

func TestUnreadableFileIsAFailureThatCanBeRetried(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("file permissions do not bind root")
	}
	dir := t.TempDir()
	testkit.Tone(t, filepath.Join(dir, "locked.mp3"), 440, 1*time.Second)
	os.Chmod(filepath.Join(dir, "locked.mp3"), 0)
	a := openArchive(t, recall.Options{})
	rep, _ := a.Add(context.Background(), "b", []string{dir}, recall.AddOptions{})
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Error, "permission denied") {
		t.Fatalf("unreadable file: %+v", rep)
	}
}

func TestHashFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	for name, content := range map[string][]byte{"empty": nil, "data": data} {
		p := filepath.Join(dir, name)
		write(t, p, content)
		sum, size, err := recall.HashFile(p)
		want := sha256.Sum256(content)
		if err != nil || sum != hex.EncodeToString(want[:]) || size != int64(len(content)) {
			t.Errorf("%s: %s %d %v", name, sum, size, err)
		}
	}
	if _, _, err := recall.HashFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("hashing a missing file succeeded")
	}
}
