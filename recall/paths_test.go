package recall_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// TestFilesAreTheSameWhereverYouStand: a folder added by a relative path
// in one directory is run from another; the same recording added again by
// its absolute path, by a path with dots, and through a symbolic link to
// its folder is still one file, recorded by its real path and shown by
// the link's; a file an earlier version recorded by a relative path is
// recorded by its real path when add runs where that path names it.
func TestFilesAreTheSameWhereverYouStand(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, "", map[string]time.Duration{})
	root := t.TempDir()
	small := filepath.Join(root, "small")
	os.MkdirAll(small, 0o755)
	testkit.Tone(t, filepath.Join(small, "a.mp3"), 440, 2*time.Second, "-ac", "1")
	link := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	for _, p := range []string{"small", small, "./small/../small", link} {
		if _, err := w.a.Add(ctx, "b1", []string{p}, recall.AddOptions{}); err != nil {
			t.Fatalf("add %s: %v", p, err)
		}
	}
	st, err := w.a.Status(ctx, "b1")
	if err != nil || st.Items[recording.Added] != 1 || st.Contents != 1 {
		t.Fatalf("status after adding one file by four paths: %+v, %v", st.Items, err)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(small, "a.mp3"))
	files, err := w.a.Store().Files(ctx, "b1", recording.Added)
	if err != nil || len(files) != 1 || files[0].Path != real || files[0].Display() != filepath.Join(link, "a.mp3") {
		t.Fatalf("files: %+v, %v; want %s shown as %s", files, err, real, filepath.Join(link, "a.mp3"))
	}

	t.Chdir(t.TempDir())
	rep, err := w.a.Run(ctx, "b1", recall.RunOptions{Provider: w.provider("openai"), PricePerMinute: 6000, CacheDir: w.cache})
	if err != nil || rep.Done != 1 || rep.Failed != 0 {
		t.Fatalf("run from another directory: %+v, %v", rep, err)
	}

	// A file recorded by a relative path, as earlier versions did.
	other := filepath.Join(root, "other")
	os.MkdirAll(other, 0o755)
	testkit.Tone(t, filepath.Join(other, "b.mp3"), 550, 2*time.Second, "-ac", "1")
	sum, size, _ := recall.HashFile(filepath.Join(other, "b.mp3"))
	w.a.Store().AddBatch(ctx, "b2")
	if _, _, err := w.a.Store().PutFile(ctx, store.File{Batch: "b2", Path: "other/b.mp3", SHA256: sum, State: recording.Added},
		&store.Content{SHA256: sum, Size: size, Duration: 2 * time.Second, Probed: true}); err != nil {
		t.Fatal(err)
	}
	rep, err = w.a.Run(ctx, "b2", recall.RunOptions{Provider: w.provider("openai"), PricePerMinute: 6000, CacheDir: w.cache})
	if err != nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Error, "add' again from the directory it was added from") {
		t.Fatalf("run of a relative path from elsewhere: %+v, %v; want it failed, saying how to add it again", rep, err)
	}
	t.Chdir(root)
	if _, err := w.a.Add(ctx, "b2", []string{"other"}, recall.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if files, _ := w.a.Store().Files(ctx, "b2", recording.Added, recording.Failed); len(files) != 1 || !filepath.IsAbs(files[0].Path) {
		t.Fatalf("files of b2 after add from where its relative path was: %+v; want one, by its absolute path", files)
	}
}
