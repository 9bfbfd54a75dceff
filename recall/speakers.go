package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// ErrSpeakers reports speakers that cannot be named: a label the
// transcript does not give, or a name that cannot be shown. The error
// says which, and what to do.
var ErrSpeakers = errors.New("speakers not named")

// maxNameRunes bounds a speaker's name: a name, not a paragraph, in every
// subtitle line it starts.
const maxNameRunes = 80

// Speaker is one of the speakers a transcript labels. In JSON, its times
// are first_seconds, when it first speaks, and spoken_seconds, how long
// its segments last in all.
type Speaker struct {
	// Label is the provider's ("A", "B"); Name the one a person gave it,
	// if any, which exports, searches and the console show instead.
	Label    string        `json:"label"`
	Name     string        `json:"name,omitempty"`
	Segments int           `json:"segments"`
	First    time.Duration `json:"-"`
	Spoken   time.Duration `json:"-"`
}

// MarshalJSON writes s with its times in seconds.
func (s Speaker) MarshalJSON() ([]byte, error) {
	type fields Speaker
	return json.Marshal(struct {
		fields
		First  float64 `json:"first_seconds"`
		Spoken float64 `json:"spoken_seconds"`
	}{fields(s), seconds(s.First), seconds(s.Spoken)})
}

// SpeakersReport is a recording's speakers, as its transcript labels them,
// with their names.
type SpeakersReport struct {
	Batch  string `json:"batch"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Provider and Model made the transcript whose labels these are.
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Speakers []Speaker `json:"speakers"`
	// Named are the labels whose names this call gave or took away.
	Named []string `json:"named"`
}

// Speakers returns the speakers of the recording that the batch's file at
// path holds, as its transcript labels them (the one that export writes:
// the latest whole one by a real provider, else the sandbox's), in the
// order they first speak, after giving them names: label to name, an
// empty name taking the label's away. A label may be given as exports
// show it ("Speaker A") and case aside. Names belong to the recording,
// in every batch that holds it, and go with the labels: a transcript made
// again by another provider, which may label the speakers otherwise, may
// need them named again. Nothing is sent to a provider, nothing is paid.
func (a *Archive) Speakers(ctx context.Context, batch, path string, names map[string]string) (SpeakersReport, error) {
	rep := SpeakersReport{Batch: batch, Path: path, Speakers: []Speaker{}, Named: []string{}}
	if err := a.checkBatch(ctx, batch); err != nil {
		return rep, err
	}
	files, err := a.store.Files(ctx, batch, recording.Added)
	if err != nil {
		return rep, err
	}
	i := slices.IndexFunc(files, func(f store.File) bool { return matches(f, path) })
	if i < 0 {
		return rep, fmt.Errorf("no recording %q in batch %q: give the path of a file added to it, as it was added", path, batch)
	}
	rep.Path, rep.SHA256 = files[i].Display(), files[i].SHA256
	who, ok, err := a.transcribed(ctx, rep.SHA256, ExportOptions{Sandbox: true})
	if err == nil && !ok {
		err = fmt.Errorf("%q has no whole transcript yet: run the batch, with --speakers for the provider to label who speaks", rep.Path)
	}
	if err != nil {
		return rep, err
	}
	rep.Provider, rep.Model = who.Provider, who.Model
	doc, err := a.document(ctx, rep.SHA256, who)
	if err != nil {
		return rep, err
	}
	rep.Speakers = speakersOf(doc)
	if len(names) > 0 {
		given, err := labelled(rep, names)
		if err != nil {
			return rep, err
		}
		if err := a.store.NameSpeakers(ctx, rep.SHA256, given); err != nil {
			return rep, err
		}
		for i, s := range rep.Speakers {
			if name, ok := given[s.Label]; ok {
				rep.Speakers[i].Name = name
				rep.Named = append(rep.Named, s.Label)
			}
		}
	}
	return rep, nil
}

// speakersOf returns the speakers doc's segments label, in the order they
// first speak, with their names.
func speakersOf(doc Document) []Speaker {
	out := []Speaker{}
	at := map[string]int{}
	for _, seg := range doc.Segments {
		if seg.Speaker == "" {
			continue
		}
		i, seen := at[seg.Speaker]
		if !seen {
			i, at[seg.Speaker] = len(out), len(out)
			out = append(out, Speaker{Label: seg.Speaker, Name: doc.Names[seg.Speaker], First: seg.Start})
		}
		out[i].Segments++
		out[i].Spoken += seg.End - seg.Start
	}
	return out
}

// labelled returns names by the labels of rep's speakers, each name
// trimmed, or an error naming the label or the name that is wrong.
func labelled(rep SpeakersReport, names map[string]string) (map[string]string, error) {
	if len(rep.Speakers) == 0 {
		return nil, fmt.Errorf("%w: the transcript of %q by %s/%s labels no speakers: transcribe it with --speakers to name them ('recall-archive retranscribe %s --provider P --speakers')",
			ErrSpeakers, rep.Path, rep.Provider, rep.Model, rep.Batch)
	}
	labels := make([]string, len(rep.Speakers))
	for i, s := range rep.Speakers {
		labels[i] = s.Label
	}
	given := map[string]string{}
	for _, asked := range slices.Sorted(maps.Keys(names)) {
		i := slices.IndexFunc(labels, func(l string) bool {
			return strings.EqualFold(asked, l) || strings.EqualFold(asked, recording.Speaker(l, ""))
		})
		if i < 0 {
			return nil, fmt.Errorf("%w: the transcript of %q labels no speaker %q: give one of %s", ErrSpeakers, rep.Path, asked, strings.Join(labels, ", "))
		}
		name := strings.TrimSpace(names[asked])
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("%w: the name of %s, %q, %v", ErrSpeakers, labels[i], names[asked], err)
		}
		if _, twice := given[labels[i]]; twice {
			return nil, fmt.Errorf("%w: speaker %s is named twice: give each label once", ErrSpeakers, labels[i])
		}
		given[labels[i]] = name
	}
	return given, nil
}

// checkName says what keeps name from being shown as a speaker's in a
// subtitle line.
func checkName(name string) error {
	switch {
	case !utf8.ValidString(name):
		return errors.New("is not UTF-8 text")
	case utf8.RuneCountInString(name) > maxNameRunes:
		return fmt.Errorf("is longer than %d characters: give a shorter one", maxNameRunes)
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New("holds a line break or a control character: give it on one line")
	}
	return nil
}
