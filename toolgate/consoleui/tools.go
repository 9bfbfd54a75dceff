package consoleui

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// filter selects the tools the page shows.
type filter struct {
	Class, Tag, Exposure string
	Review               bool
}

func (f filter) keeps(r toolgate.Row, tags []string) bool {
	switch {
	case f.Class != "" && r.Risk != f.Class,
		f.Tag != "" && !slices.Contains(tags, f.Tag),
		f.Review && !r.Review,
		f.Exposure != "" && f.Exposure != exposureOf(r):
		return false
	}
	return true
}

// exposureOf says whether a tool is shown: yes, confirm or no.
func exposureOf(r toolgate.Row) string {
	switch {
	case r.Confirm:
		return "confirm"
	case r.Exposed:
		return "yes"
	}
	return "no"
}

// option is one choice of a select.
type option struct {
	Value, Label string
	Selected     bool
}

// options lists choices with value selected; a value written in the file
// that is not among them is kept as a choice of its own.
func options(value string, choices [][2]string) []option {
	out := make([]option, 0, len(choices)+1)
	found := false
	for _, c := range choices {
		sel := c[0] == value
		found = found || sel
		out = append(out, option{c[0], c[1], sel})
	}
	if !found {
		out = append(out, option{value, value + " (as written)", true})
	}
	return out
}

// The choices of a tool's settings; "not set" leaves the decision to the
// tag's rule and the defaults.
var exposeChoices = [][2]string{
	{"", "not set"},
	{"true", "true (shown)"},
	{"confirm", "confirm (each call)"},
	{"false", "false (hidden)"},
}

var retryChoices = [][2]string{
	{"", "not set"},
	{"by_method", "by_method"},
	{"not_sent_only", "not_sent_only"},
	{"opted_in", "opted_in"},
}

// rowView is a tool as the page shows it, with its settings as written.
type rowView struct {
	toolgate.Row
	Tags []string
	// Shown is yes, confirm or no.
	Shown string
	// Rule is the name of the tool's rule in the file's tools section,
	// which may be its operationId; WrittenExpose, WrittenRetry and
	// WrittenDeadline are that rule's settings as the file writes them.
	Rule                                         string
	WrittenExpose, WrittenRetry, WrittenDeadline string
	ExposeOptions, RetryOptions                  []option
}

// toolsData is what the tools page shows.
type toolsData struct {
	SpecPath, ConfigPath string
	Editable, Missing    bool
	Problem              string
	Written              bool
	Base                 string
	Filter               filter
	Tags                 []tagInfo
	Rows                 []rowView
	Sum                  toolgate.Summary
	Counts, ExposedCount string
}

// tools shows every tool, or those the filter keeps, with the controls
// that change its settings.
func (u *UI) tools(w http.ResponseWriter, r *http.Request) {
	s, err := u.read()
	if err != nil {
		console.Fail(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	q := r.URL.Query()
	d := toolsData{SpecPath: u.opts.SpecPath, ConfigPath: u.opts.ConfigPath, Editable: u.opts.ConfigPath != "", Missing: s.missing,
		Written: q.Get("written") != "", Base: s.hash,
		Filter: filter{Class: q.Get("class"), Tag: q.Get("tag"), Exposure: q.Get("exposure"), Review: q.Get("review") != ""}}
	if s.err != nil {
		d.Problem = s.err.Error()
		console.Render(w, r, http.StatusOK, "Tools", u.tmpl, "tools", d)
		return
	}
	d.Sum, d.Counts, d.ExposedCount = s.sum, classCounts(s.sum.ByClass), classCounts(s.sum.ExposedByClass)
	for _, tag := range s.tags() {
		tag.Expose = s.written[config.Setting{Section: "tags", Name: tag.Name, Field: "expose"}]
		tag.Deadline = s.written[config.Setting{Section: "tags", Name: tag.Name, Field: "deadline"}]
		d.Tags = append(d.Tags, tag)
	}
	for _, row := range s.rows {
		tool := s.cat.Lookup(row.Name)
		if !d.Filter.keeps(row, tool.Tags) {
			continue
		}
		v := rowView{Row: row, Tags: tool.Tags, Shown: exposureOf(row), Rule: tool.RuleName()}
		v.WrittenExpose = s.written[config.Setting{Section: "tools", Name: v.Rule, Field: "expose"}]
		v.WrittenRetry = s.written[config.Setting{Section: "tools", Name: v.Rule, Field: "retry"}]
		v.WrittenDeadline = s.written[config.Setting{Section: "tools", Name: v.Rule, Field: "deadline"}]
		v.ExposeOptions, v.RetryOptions = options(v.WrittenExpose, exposeChoices), options(v.WrittenRetry, retryChoices)
		d.Rows = append(d.Rows, v)
	}
	console.Render(w, r, http.StatusOK, "Tools", u.tmpl, "tools", d)
}

// classCounts says how many tools of each class m counts.
func classCounts(m map[string]int) string {
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%d %s", m[c], c)
	}
	return strings.Join(parts, ", ")
}
