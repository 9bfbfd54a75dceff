package recall

import (
	"context"
	"fmt"
	"github.com/rubicon-go/rubicon/recall/recording"
	"os"
	"slices"
	"strings"
)

// Export writes the transcripts of the batch's transcribed contents to
// dir, in the given formats, and returns how many contents it wrote. Each
// content's transcript is the latest that a provider made whole; the
// sandbox's placeholders only with sandbox, and only for contents that no
// other provider transcribed.
func (a *Archive) Export(ctx context.Context, batch, dir string, formats []string, sandbox bool) (int, error) {
	for _, f := range formats {
		if !slices.Contains(Formats, f) {
			return 0, fmt.Errorf("unknown format %q: use %s", f, strings.Join(Formats, ", "))
		}
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	contents, err := a.store.Contents(ctx, batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range contents {
		who, ok, err := a.transcribed(ctx, c.SHA256, sandbox)
		if err != nil {
			return n, err
		}
		if !ok {
			continue
		}
		if err := a.export(ctx, batch, c.SHA256, who, dir, formats); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// transcribed returns who made the content's transcript that counts: the
// latest whole one by a real provider, else, with sandbox, the sandbox's.
func (a *Archive) transcribed(ctx context.Context, sha string, sandbox bool) (recording.Transcriber, bool, error) {
	whole, err := a.store.Transcribers(ctx, sha)
	if err != nil {
		return recording.Transcriber{}, false, err
	}
	for _, who := range whole {
		if who.Provider != recording.Sandbox {
			return who, true, nil
		}
	}
	if sandbox && len(whole) > 0 {
		return whole[0], true, nil
	}
	return recording.Transcriber{}, false, nil
}
