package consoleui

import (
	"net/http"
	"strings"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/recording"
	"github.com/rubicon-go/rubicon/recall/store"
)

// maxHits bounds the matches a search shows.
const maxHits = 100

// hit is a search's match as the page shows it.
type hit struct {
	store.Hit
	Paths  []string
	Parts  []part
	Anchor string
	// Who speaks the segment, by name where one was given; empty where
	// speakers were not asked for.
	Who string
}

// searchData is what the search page shows.
type searchData struct {
	Query string
	// Speaker keeps the search to one speaker's segments, as
	// recall-archive search --speaker does; empty for every one.
	Speaker string
	// Sandbox: the sandbox's placeholder transcripts are searched too.
	Sandbox bool
	Hits    []hit
	Cut     bool
	// InSandbox: no real transcript holds the words, and the sandbox's
	// placeholders, left out, do.
	InSandbox bool
}

// search finds words in every transcript, each match with its recording
// and its time from the start, linked to the line in the transcript.
func (u *UI) search(w http.ResponseWriter, r *http.Request) {
	d := searchData{Query: strings.TrimSpace(r.URL.Query().Get("q")), Speaker: strings.TrimSpace(r.URL.Query().Get("speaker")), Sandbox: r.URL.Query().Get("sandbox") == "1"}
	if words := strings.Fields(d.Query); len(words) > 0 {
		// The command line's syntax; a query it cannot read is its words.
		q, err := store.ParseQuery(d.Query)
		if err != nil {
			q = store.Words(words...)
		}
		found, _, err := u.s.Find(r.Context(), q, store.Find{Limit: maxHits + 1, Sandbox: d.Sandbox, Speakers: recall.SpeakerTerms(d.Speaker), Open: markOpen, Close: markClose})
		if err != nil {
			u.fail(w, r, err)
			return
		}
		d.Cut = len(found) > maxHits
		for _, h := range found[:min(len(found), maxHits)] {
			v := hit{Hit: h, Parts: marked(h.Snippet), Anchor: anchor(h.Start)}
			if h.Speaker != "" {
				v.Who = recording.Speaker(h.Speaker, h.SpeakerName)
			}
			if v.Paths, err = u.s.Paths(r.Context(), "", h.SHA256); err != nil {
				u.fail(w, r, err)
				return
			}
			d.Hits = append(d.Hits, v)
		}
		if len(found) == 0 && !d.Sandbox {
			placeholders, _, err := u.s.Find(r.Context(), q, store.Find{Limit: 1, Sandbox: true, Speakers: recall.SpeakerTerms(d.Speaker)})
			if err != nil {
				u.fail(w, r, err)
				return
			}
			d.InSandbox = len(placeholders) > 0
		}
	}
	console.Render(w, r, http.StatusOK, "Search", u.tmpl, "search", d)
}
