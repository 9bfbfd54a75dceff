package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
	"github.com/rubicon-go/rubicon/recall/subtitle"
)

// errIncomplete reports a content whose chunks are not all transcribed.
var errIncomplete = errors.New("the transcript is not complete")

// Formats are the transcript formats recall-archive writes.
var Formats = []string{"txt", "srt", "vtt", "json"}

// Document is a content's whole transcript, chunks joined, timestamps from
// the start of the recording. In JSON, its times are in seconds:
// duration_seconds, and each segment's start_seconds and end_seconds.
type Document struct {
	SHA256   string `json:"sha256"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Settings are those the transcript was made with (see
	// recording.Transcriber); absent for the provider's defaults.
	Settings string              `json:"settings,omitempty"`
	Duration time.Duration       `json:"-"`
	Text     string              `json:"text"`
	Segments []recording.Segment `json:"-"`
	// Timing is how finely the segments are timed, the coarsest of its
	// chunks': "segments" or "words" as the provider timed them, "chunk"
	// where it gave text alone, and each segment spans its chunk.
	Timing recording.Timing `json:"timing"`
	// Names are the names people gave the speakers, by label; in JSON,
	// each segment's speaker_name.
	Names map[string]string `json:"-"`
	// Language is the recording's language as a BCP 47 tag: the one asked
	// for, or the one the provider detected in most of its audio; absent
	// when the provider said none. LanguageDetected says which.
	Language         string `json:"language,omitempty"`
	LanguageDetected bool   `json:"language_detected,omitempty"`
}

// speaker is how the speaker labelled label is shown in doc.
func (doc Document) speaker(label string) string { return recording.Speaker(label, doc.Names[label]) }

// coarser returns the coarser of two timings: a chunk's timing is coarser
// than words', which is coarser than segments'.
func coarser(a, b recording.Timing) recording.Timing {
	rank := map[recording.Timing]int{recording.TimingSegments: 0, recording.TimingWords: 1, recording.TimingChunk: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// MarshalJSON writes doc with its times in seconds, each segment with its
// words where the provider timed them.
func (doc Document) MarshalJSON() ([]byte, error) {
	type word struct {
		Start      float64  `json:"start_seconds"`
		End        float64  `json:"end_seconds"`
		Text       string   `json:"text"`
		Speaker    string   `json:"speaker,omitempty"`
		Confidence *float64 `json:"confidence,omitempty"`
	}
	type segment struct {
		Start       float64 `json:"start_seconds"`
		End         float64 `json:"end_seconds"`
		Text        string  `json:"text"`
		Speaker     string  `json:"speaker,omitempty"`
		SpeakerName string  `json:"speaker_name,omitempty"`
		Words       []word  `json:"words,omitempty"`
	}
	segs := make([]segment, len(doc.Segments))
	for i, s := range doc.Segments {
		segs[i] = segment{Start: seconds(s.Start), End: seconds(s.End), Text: s.Text, Speaker: s.Speaker, SpeakerName: doc.Names[s.Speaker]}
		for _, w := range s.Words {
			segs[i].Words = append(segs[i].Words, word{seconds(w.Start), seconds(w.End), w.Text, w.Speaker, w.Confidence})
		}
	}
	type fields Document
	return json.Marshal(struct {
		fields
		Duration float64   `json:"duration_seconds"`
		Segments []segment `json:"segments"`
	}{fields(doc), seconds(doc.Duration), segs})
}

// seconds is d in seconds, to the millisecond, for JSON.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// document assembles sha's transcript by who, or returns errIncomplete.
func (a *Archive) document(ctx context.Context, sha string, who recording.Transcriber) (Document, error) {
	doc := Document{SHA256: sha, Segments: []recording.Segment{}, Timing: recording.TimingSegments}
	parts, err := a.store.Parts(ctx, sha, who)
	if err != nil {
		return doc, err
	}
	if len(parts) == 0 {
		return doc, errIncomplete
	}
	var texts []string
	for _, p := range parts {
		if !p.Transcribed {
			return doc, errIncomplete
		}
		doc.Provider, doc.Model, doc.Settings = p.Provider, p.Model, p.Settings
		doc.Duration = p.Start + p.Duration
		doc.Timing = coarser(doc.Timing, p.Timing)
		for _, seg := range p.Segments {
			seg.Start += p.Start
			seg.End += p.Start
			seg.Words = slices.Clone(seg.Words) // the part's own, not shifted twice
			for i := range seg.Words {
				seg.Words[i].Start += p.Start
				seg.Words[i].End += p.Start
			}
			doc.Segments = append(doc.Segments, seg)
		}
		if t := strings.TrimSpace(p.Text); t != "" {
			texts = append(texts, t)
		}
	}
	doc.Text = strings.Join(texts, "\n")
	doc.Language, doc.LanguageDetected = store.Language(parts)
	doc.Names, err = a.store.SpeakerNames(ctx, sha)
	return doc, err
}

// writeOutputs writes the transcript of sha by who, in every format, for
// each of its files in batch.
func (a *Archive) writeOutputs(ctx context.Context, batch, sha string, who recording.Transcriber, dir string) error {
	return a.export(ctx, batch, sha, who, dir, Formats)
}

// export writes the transcript of sha by who, in formats, for each of its
// files in batch.
func (a *Archive) export(ctx context.Context, batch, sha string, who recording.Transcriber, dir string, formats []string) error {
	doc, err := a.document(ctx, sha, who)
	if err != nil {
		return err
	}
	paths, err := a.store.AddedPaths(ctx, batch, sha)
	if err != nil {
		return err
	}
	for _, p := range paths {
		for _, f := range formats {
			if err := writeAtomically(filepath.Join(dir, outputName(p, sha, f)), render(doc, f, a.subtitles)); err != nil {
				return err
			}
		}
	}
	return nil
}

// outputName is the transcript's file name: the recording's name, a short
// content hash (two recordings may share a name), and the format.
func outputName(path, sha, format string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	base = strings.Map(func(r rune) rune {
		if r < ' ' || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, base)
	return fmt.Sprintf("%s.%s.%s", base, sha[:8], format)
}

// render formats doc as txt, srt, vtt or json; subtitles cut under
// rules.
func render(doc Document, format string, rules subtitle.Rules) []byte {
	var b strings.Builder
	switch format {
	case "txt":
		b.WriteString(plainText(doc))
		b.WriteByte('\n')
	case "srt":
		for i, c := range cues(labelTurns(doc), rules) {
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, stamp(c.Start, ","), stamp(c.End, ","), strings.Join(c.Lines, "\n"))
		}
	case "vtt":
		b.WriteString("WEBVTT\n\n")
		if doc.Timing == recording.TimingChunk {
			fmt.Fprintf(&b, "NOTE %s/%s gives text without timestamps: each cue's time is the share of its words in a chunk of the recording\n\n", doc.Provider, doc.Model)
		}
		for _, c := range cues(doc, rules) {
			voice := ""
			if c.Speaker != "" {
				voice = "<v " + voiceEscaper.Replace(doc.speaker(c.Speaker)) + ">"
			}
			fmt.Fprintf(&b, "%s --> %s\n%s%s\n\n", stamp(c.Start, "."), stamp(c.End, "."), voice, vttText(c, rules.WordTimes))
		}
	default:
		out, _ := json.MarshalIndent(doc, "", "  ")
		b.Write(out)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// cues cuts doc's segments into subtitle cues under rules, timed by their
// words where the provider timed them.
func cues(doc Document, rules subtitle.Rules) []subtitle.Cue {
	segments := make([]subtitle.Segment, len(doc.Segments))
	for i, s := range doc.Segments {
		segments[i] = subtitle.Segment{Start: s.Start, End: s.End, Text: s.Text, Speaker: s.Speaker}
		for _, w := range s.Words {
			segments[i].Words = append(segments[i].Words, subtitle.Word{Start: w.Start, End: w.End, Text: w.Text})
		}
	}
	return subtitle.Cues(segments, rules)
}

// voiceEscaper writes a speaker's name as a VTT voice's annotation,
// which may hold no "<" or ">" and escapes "&".
var voiceEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// labelTurns returns doc with each segment that starts a speaker's turn
// beginning with the speaker's name, as SRT, which has no voices, shows
// who speaks.
func labelTurns(doc Document) Document {
	segs := make([]recording.Segment, len(doc.Segments))
	prev := ""
	for i, s := range doc.Segments {
		if s.Speaker != "" && s.Speaker != prev {
			name := doc.speaker(s.Speaker)
			s.Text = name + ": " + s.Text
			// The name is said, as it were, in no time at the turn's
			// first word, so that the words still time the text.
			if len(s.Words) > 0 {
				at := s.Words[0].Start
				s.Words = append([]recording.Word{{Start: at, End: at, Text: name + ":"}}, s.Words...)
			}
		}
		prev = s.Speaker
		segs[i] = s
	}
	doc.Segments = segs
	return doc
}

// vttText is c's lines, with wordTimes each word after the first preceded
// by the time it is said, where the provider timed words: a WebVTT
// timestamp tag, which must come after the cue's start and every tag
// before it, and before the cue's end (a word said after a cue cut at
// --cue-duration gets none).
func vttText(c subtitle.Cue, wordTimes bool) string {
	if !wordTimes || len(c.Words) == 0 {
		return strings.Join(c.Lines, "\n")
	}
	lines := make([]string, len(c.Lines))
	k, last := 0, c.Start
	for i, l := range c.Lines {
		fields := strings.Fields(l)
		for j, f := range fields {
			if k < len(c.Words) {
				if at := c.Words[k].Start; k > 0 && at > last && at < c.End {
					fields[j] = "<" + stamp(at, ".") + ">" + f
					last = at
				}
			}
			k++
		}
		lines[i] = strings.Join(fields, " ")
	}
	return strings.Join(lines, "\n")
}

// plainText is doc's text, a paragraph per speaker's turn where the
// speakers are labelled.
func plainText(doc Document) string {
	labelled := false
	for _, s := range doc.Segments {
		labelled = labelled || s.Speaker != ""
	}
	if !labelled {
		return doc.Text
	}
	var turns []string
	prev := "\x00"
	for _, s := range doc.Segments {
		if s.Speaker != prev {
			turns = append(turns, doc.speaker(s.Speaker)+": "+s.Text)
			prev = s.Speaker
			continue
		}
		turns[len(turns)-1] += " " + s.Text
	}
	return strings.Join(turns, "\n\n")
}

// stamp formats d as HH:MM:SS followed by sep and milliseconds.
func stamp(d time.Duration, sep string) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

// writeAtomically writes data to path through a temporary file, so that a
// crash never leaves half a transcript. The file is created 0644 and so
// gets the mode the umask gives, as any exported file does.
func writeAtomically(path string, data []byte) error {
	var tmp *os.File
	var err error
	for range 100 {
		name := filepath.Join(filepath.Dir(path), fmt.Sprintf(".recall-%d.tmp", rand.Uint64()))
		if tmp, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
