package consoleui

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// line is a transcript's segment, timed from the start of the recording.
type line struct {
	Start, End time.Duration
	Text       string
	// Speaker is who speaks, by name where one was given, shown where a
	// turn starts.
	Speaker string
	// Anchor names the line in the page, for a search's match to link to.
	Anchor string
}

// anchor names the line that starts at offset.
func anchor(offset time.Duration) string { return fmt.Sprintf("t%d", offset.Microseconds()) }

// partView is a part of a recording as its page shows it.
type partView struct {
	store.Part
	Op    journal.Operation
	Lines []line
}

// recordingData is what a recording's page shows.
type recordingData struct {
	Content store.Content
	Paths   []string
	Parts   []partView
	// Language is the transcript's, as store.Language finds it, and
	// LanguageDetected whether the provider detected it.
	Language         string
	LanguageDetected bool
}

// recording shows a recording's transcript, part by part, each line at
// its time from the start of the recording, with the request that paid
// for each part.
func (u *UI) recording(w http.ResponseWriter, r *http.Request) {
	ctx, sha := r.Context(), r.PathValue("sha")
	c, ok, err := u.s.Content(ctx, sha)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	if !ok {
		console.Fail(w, r, http.StatusNotFound, fmt.Sprintf("The archive has no recording whose SHA-256 is %q.", sha))
		return
	}
	d := recordingData{Content: c}
	if d.Paths, err = u.s.Paths(ctx, "", sha); err != nil {
		u.fail(w, r, err)
		return
	}
	parts, err := u.s.Parts(ctx, sha, recording.Transcriber{})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d.Language, d.LanguageDetected = store.Language(parts)
	names, err := u.s.SpeakerNames(ctx, sha)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	for _, p := range parts {
		v := partView{Part: p}
		if v.Op, err = u.s.Operation(ctx, p.Key); err != nil {
			u.fail(w, r, err)
			return
		}
		prev := ""
		for _, seg := range p.Segments {
			start := p.Start + seg.Start
			l := line{Start: start, End: p.Start + seg.End, Text: seg.Text, Anchor: anchor(start)}
			if seg.Speaker != prev && seg.Speaker != "" {
				l.Speaker = recording.Speaker(seg.Speaker, names[seg.Speaker])
			}
			prev = seg.Speaker
			v.Lines = append(v.Lines, l)
		}
		d.Parts = append(d.Parts, v)
	}
	console.Render(w, r, http.StatusOK, "Recording "+short(sha), u.tmpl, "recording", d)
}
