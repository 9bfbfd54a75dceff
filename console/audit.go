package console

import (
	"errors"
	"net/http"
	"sort"
	"strconv"

	"github.com/rubicon-go/rubicon/journal"
)

// auditPage is how many entries a page of the audit log shows.
const auditPage = 100

// auditData is what a page of the audit log shows.
type auditData struct {
	Work    Work
	Entries []auditEntry
	// Older is the ID to read the next page before, or 0 at the end.
	Older int64
	First bool
}

type auditEntry struct {
	journal.Entry
	Evidence []evidenceItem
}

// audit shows the audit log, newest first, a page at a time.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	entries, err := s.opts.Journal.Audit(r.Context(), journal.AuditFilter{Kind: s.opts.Work.Kind, Before: max(before, 0), Limit: auditPage + 1})
	if errors.Is(err, journal.ErrNoAuditLog) {
		Fail(w, r, http.StatusNotImplemented, "This journal's store reads the audit log one operation at a time only: open an operation to see its history.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := auditData{Work: s.opts.Work, First: before <= 0}
	if len(entries) > auditPage {
		entries = entries[:auditPage]
		d.Older = entries[auditPage-1].ID
	}
	for _, e := range entries {
		d.Entries = append(d.Entries, auditEntry{e, items(e.Evidence)})
	}
	Render(w, r, http.StatusOK, "Audit log", s.pages, "audit", d)
}

// items lists evidence by name.
func items(ev journal.Evidence) []evidenceItem {
	out := make([]evidenceItem, 0, len(ev))
	for k, v := range ev {
		out = append(out, evidenceItem{k, text(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
