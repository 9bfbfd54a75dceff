package consoleui

import (
	"net/http"
	"strings"

	"github.com/rubicon-go/rubicon/console"
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
}

// searchData is what the search page shows.
type searchData struct {
	Query string
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
	d := searchData{Query: strings.TrimSpace(r.URL.Query().Get("q")), Sandbox: r.URL.Query().Get("sandbox") == "1"}
	if words := strings.Fields(d.Query); len(words) > 0 {
		found, err := u.s.SearchMarked(r.Context(), words, maxHits+1, d.Sandbox, markOpen, markClose)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		d.Cut = len(found) > maxHits
		for _, h := range found[:min(len(found), maxHits)] {
			v := hit{Hit: h, Parts: marked(h.Snippet), Anchor: anchor(h.Start)}
			if v.Paths, err = u.s.Paths(r.Context(), "", h.SHA256); err != nil {
				u.fail(w, r, err)
				return
			}
			d.Hits = append(d.Hits, v)
		}
		if len(found) == 0 && !d.Sandbox {
			placeholders, err := u.s.Search(r.Context(), words, 1, true)
			if err != nil {
				u.fail(w, r, err)
				return
			}
			d.InSandbox = len(placeholders) > 0
		}
	}
	console.Render(w, r, http.StatusOK, "Search", u.tmpl, "search", d)
}
