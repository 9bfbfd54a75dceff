package recall

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/recall/store"
)

// Export writes the transcripts of the batch's transcribed contents to
// dir, in the given formats, and returns how many contents it wrote.
func (a *Archive) Export(ctx context.Context, batch, dir string, formats []string) (int, error) {
	for _, f := range formats {
		if !slices.Contains(Formats, f) {
			return 0, fmt.Errorf("recall: unknown format %q: use %s", f, strings.Join(Formats, ", "))
		}
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	progress, err := a.store.Progress(ctx, batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for sha, p := range progress {
		if p != store.Done {
			continue
		}
		if err := a.export(ctx, batch, sha, dir, formats); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
