package recall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// ExportReport is what an export wrote.
type ExportReport struct {
	Batch string `json:"batch"`
	Out   string `json:"out"`
	// Recordings counts the distinct recordings whose transcripts were
	// written, Files the batch's files they were written for.
	Recordings int            `json:"recordings"`
	Files      []ExportedFile `json:"files"`
	// By is the transcriber asked for, and Without counts the batch's
	// recordings it has not transcribed whole, which were not written;
	// both absent when the latest transcript of each was asked for.
	By      string `json:"transcriber,omitempty"`
	Without *int   `json:"without_transcript,omitempty"`
}

// ExportOptions say what an export writes.
type ExportOptions struct {
	// Formats are some of [Formats].
	Formats []string
	// Sandbox writes the sandbox's placeholder transcripts too, for the
	// recordings no other provider transcribed.
	Sandbox bool
	// By, if set, writes each recording's transcript by that provider,
	// model and settings, and none for a recording without one; else the
	// latest that a provider made whole.
	By recording.Transcriber
}

// ExportedFile is one of the batch's files and the transcripts written
// for it.
type ExportedFile struct {
	Path    string   `json:"path"`
	SHA256  string   `json:"sha256"`
	Written []string `json:"written"`
}

// Export writes the transcripts of the batch's transcribed contents to
// dir, as [Archive.ExportFiles] does, and returns how many contents it
// wrote.
func (a *Archive) Export(ctx context.Context, batch, dir string, formats []string, sandbox bool) (int, error) {
	rep, err := a.ExportFiles(ctx, batch, dir, ExportOptions{Formats: formats, Sandbox: sandbox})
	return rep.Recordings, err
}

// ExportFiles writes the transcripts of the batch's transcribed contents
// to dir, as opts say, in the folder tree of the batch's files:
// the transcripts of talks/talk.mp3 are talks/talk.srt and so on, under
// dir, below the deepest folder that holds every file of the batch, so
// that a player finds a recording's subtitles beside it. Two files whose
// transcripts would have the same name (talk.mp3 and talk.wav) are told
// apart by the recording's extension: the first by path keeps talk.srt,
// the next is talk.wav.srt. Each content's transcript is opts.By's, or
// the latest that a provider made whole; the sandbox's placeholders only
// with opts.Sandbox, and only for contents that no other provider
// transcribed.
func (a *Archive) ExportFiles(ctx context.Context, batch, dir string, opts ExportOptions) (ExportReport, error) {
	rep := ExportReport{Batch: batch, Out: dir, Files: []ExportedFile{}}
	formats := opts.Formats
	if !opts.By.IsZero() {
		rep.By, rep.Without = opts.By.String(), new(int)
	}
	for _, f := range formats {
		if !slices.Contains(Formats, f) {
			return rep, fmt.Errorf("unknown format %q: use %s", f, strings.Join(Formats, ", "))
		}
	}
	if err := a.checkBatch(ctx, batch); err != nil {
		return rep, err
	}
	files, err := a.store.Files(ctx, batch, recording.Added)
	if err != nil {
		return rep, err
	}
	docs := map[string]*Document{}
	var chosen []store.File
	for _, f := range files {
		if _, seen := docs[f.SHA256]; !seen {
			who, ok, err := a.transcribed(ctx, f.SHA256, opts)
			if err != nil {
				return rep, err
			}
			docs[f.SHA256] = nil
			if !ok && rep.Without != nil {
				*rep.Without++
			}
			if ok {
				doc, err := a.document(ctx, f.SHA256, who)
				if err != nil && !errors.Is(err, errIncomplete) {
					return rep, err
				}
				if err == nil {
					docs[f.SHA256] = &doc
					rep.Recordings++
				}
			}
		}
		if docs[f.SHA256] != nil {
			chosen = append(chosen, f)
		}
	}
	slices.SortFunc(chosen, func(x, y store.File) int { return strings.Compare(x.Display(), y.Display()) })
	paths := make([]string, len(chosen))
	for i, f := range chosen {
		paths[i] = f.Display()
	}
	names := exportNames(paths)
	for i, f := range chosen {
		ef := ExportedFile{Path: paths[i], SHA256: f.SHA256, Written: []string{}}
		for _, format := range formats {
			out := filepath.Join(dir, names[i]+"."+format)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return rep, err
			}
			if err := writeAtomically(out, render(*docs[f.SHA256], format, a.subtitles)); err != nil {
				return rep, err
			}
			ef.Written = append(ef.Written, out)
		}
		rep.Files = append(rep.Files, ef)
	}
	return rep, os.MkdirAll(dir, 0o755)
}

// exportNames returns, for each of paths (sorted), the name its
// transcripts take below the export's folder, without the format's
// extension: its path from the deepest folder that holds them all,
// without its extension, and with it where another file's name would be
// the same (compared without case, as some file systems do).
func exportNames(paths []string) []string {
	root := ""
	for i, p := range paths {
		if i == 0 {
			root = filepath.Dir(p)
		}
		for !within(root, p) && filepath.Dir(root) != root {
			root = filepath.Dir(root)
		}
	}
	names := make([]string, len(paths))
	taken := map[string]bool{}
	for i, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			rel = filepath.Base(p)
		}
		rel = cleanName(rel)
		name := strings.TrimSuffix(rel, filepath.Ext(rel))
		if taken[strings.ToLower(name)] {
			name = rel
		}
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s.%d", rel, n)
		}
		taken[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
}

// within reports whether path is in the folder dir, or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// cleanName replaces in a relative path the characters that a file name
// may not hold.
func cleanName(rel string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == '\\' && filepath.Separator != '\\' {
			return '_'
		}
		return r
	}, rel)
}

// transcribed returns who made the content's transcript that counts:
// opts.By if it made one whole; else the latest whole one by a real
// provider, else, with opts.Sandbox, the sandbox's.
func (a *Archive) transcribed(ctx context.Context, sha string, opts ExportOptions) (recording.Transcriber, bool, error) {
	whole, err := a.store.Transcribers(ctx, sha)
	if err != nil {
		return recording.Transcriber{}, false, err
	}
	if !opts.By.IsZero() {
		return opts.By, slices.Contains(whole, opts.By), nil
	}
	sandbox := opts.Sandbox
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
