package consoleui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/rubicon-go/rubicon/console"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// toolFields and tagFields are the settings the page changes.
var (
	toolFields = []string{"expose", "retry", "deadline"}
	tagFields  = []string{"expose", "deadline"}
)

// editsFrom returns the edits a form asks for: each setting it holds,
// named as the file names it (tools.NAME.FIELD, tags.TAG.FIELD), whose
// value differs from what s's file writes.
func editsFrom(form url.Values, s *surface) []config.Edit {
	var edits []config.Edit
	add := func(section, name string, fields []string) {
		for _, field := range fields {
			set := config.Setting{Section: section, Name: name, Field: field}
			values, ok := form[set.String()]
			if !ok || len(values) == 0 {
				continue
			}
			if v := strings.TrimSpace(values[0]); v != s.written[set] {
				edits = append(edits, config.Edit{Setting: set, Value: v})
			}
		}
	}
	for _, t := range s.cat.Tools {
		add("tools", t.RuleName(), toolFields)
	}
	for _, tag := range s.tags() {
		add("tags", tag.Name, tagFields)
	}
	return edits
}

// change is how a tool's decisions change.
type change struct {
	Name, Class                       string
	ExposureBefore, ExposureAfter     string
	RuleBefore, RuleAfter             string
	RetryBefore, RetryAfter           string
	DeadlineBefore, DeadlineAfter     string
	ExposureChanged, RetryChanged     bool
	DeadlineChanged, Enables, Dropped bool
}

// proposal is what a change of the configuration would do.
type proposal struct {
	Edits      []config.Edit
	Base       string
	ConfigPath string
	Problem    string
	Diff       []diffLine
	Changes    []change
	// Enable are the destructive or privileged tools that the change
	// shows, or no longer confirms, which a person must confirm by
	// sending EnableKey.
	Enable        []enabled
	EnableKey     string
	Before, After toolgate.Summary
	Valid, Empty  bool
	Missing       bool
}

type diffLine struct{ Kind, Text string }

// enabled is a destructive or privileged tool a change enables.
type enabled struct {
	Name, Class string
	Confirm     bool // each call is accepted by a person
}

// propose reads the form of r and works out what it would change; the
// status says why it cannot be shown or written, if it cannot.
func (u *UI) propose(w http.ResponseWriter, r *http.Request) (*proposal, []byte, int) {
	p := &proposal{ConfigPath: u.opts.ConfigPath}
	if u.opts.ConfigPath == "" {
		p.Problem = "The console was started without --config FILE, so it has no configuration file to change. Start it with --config FILE."
		return p, nil, http.StatusConflict
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
	if err := r.ParseForm(); err != nil {
		p.Problem = "The form could not be read."
		return p, nil, http.StatusBadRequest
	}
	before, err := u.read()
	if err != nil {
		p.Problem = err.Error()
		return p, nil, http.StatusInternalServerError
	}
	p.Base, p.Missing = before.hash, before.missing
	switch {
	case before.err != nil:
		p.Problem = "The configuration does not load, so the console cannot change it: " + before.err.Error()
		return p, nil, http.StatusConflict
	case r.PostForm.Get("base") != before.hash:
		p.Problem = u.opts.ConfigPath + " changed since this page was made. Open the Tools page again, and make your change there."
		return p, nil, http.StatusConflict
	}
	p.Before = before.sum
	p.Edits = editsFrom(r.PostForm, before)
	if len(p.Edits) == 0 {
		p.Empty = true
		return p, nil, http.StatusOK
	}
	data, err := config.Apply(before.data, p.Edits)
	if err != nil {
		p.Problem = err.Error()
		return p, nil, http.StatusUnprocessableEntity
	}
	p.Diff = diffLines(udiff.Unified(u.opts.ConfigPath+" (now)", u.opts.ConfigPath+" (after the change)", string(before.data), string(data)))
	after := u.build(data)
	if after.err != nil {
		p.Problem = "The configuration would not load, so it is not written: " + after.err.Error()
		return p, nil, http.StatusUnprocessableEntity
	}
	p.After, p.Valid = after.sum, true
	p.Changes, p.Enable = compare(before, after)
	names := make([]string, len(p.Enable))
	for i, e := range p.Enable {
		names[i] = e.Name
	}
	p.EnableKey = strings.Join(names, ",")
	return p, data, http.StatusOK
}

// compare returns how each tool's decisions change from before to after,
// and the destructive or privileged tools the change shows, or no longer
// confirms.
func compare(before, after *surface) ([]change, []enabled) {
	old := map[string]toolgate.Row{}
	for _, r := range before.rows {
		old[r.Name] = r
	}
	var changes []change
	var enable []enabled
	for _, a := range after.rows {
		b := old[a.Name]
		c := change{Name: a.Name, Class: a.Risk,
			ExposureBefore: exposureOf(b), ExposureAfter: exposureOf(a), RuleBefore: b.ExposureRule, RuleAfter: a.ExposureRule,
			RetryBefore: b.Retry, RetryAfter: a.Retry, DeadlineBefore: b.Deadline, DeadlineAfter: a.Deadline}
		c.ExposureChanged = c.ExposureBefore != c.ExposureAfter
		c.RetryChanged, c.DeadlineChanged = b.Retry != a.Retry, b.Deadline != a.Deadline
		class, _ := risk.Parse(a.Risk)
		c.Enables = class >= risk.Destructive && a.Exposed && (!b.Exposed || b.Confirm && !a.Confirm)
		if c.Enables {
			enable = append(enable, enabled{a.Name, a.Risk, a.Confirm})
		}
		if c.ExposureChanged || c.RetryChanged || c.DeadlineChanged || b.ExposureRule != a.ExposureRule {
			changes = append(changes, c)
		}
	}
	return changes, enable
}

// diffLines splits a unified diff into lines marked for the page.
func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			kind = "file"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		}
		out = append(out, diffLine{kind, l})
	}
	return out
}

// preview shows what the form's changes would do, and the form that
// writes them.
func (u *UI) preview(w http.ResponseWriter, r *http.Request) {
	p, _, status := u.propose(w, r)
	console.Render(w, r, status, "Review the change", u.tmpl, "preview", p)
}

// write writes the form's changes to the configuration file, once the
// loader accepts them and a person confirmed each destructive or
// privileged tool they enable.
func (u *UI) write(w http.ResponseWriter, r *http.Request) {
	u.writing.Lock()
	defer u.writing.Unlock()
	p, data, status := u.propose(w, r)
	if p.Problem == "" && !p.Empty && p.EnableKey != "" && r.PostForm.Get("enable") != p.EnableKey {
		p.Problem = fmt.Sprintf("Nothing was written: this change enables %s, which a person confirms by ticking the box below.",
			strings.ReplaceAll(p.EnableKey, ",", ", "))
		status = http.StatusUnprocessableEntity
	}
	if p.Problem != "" || p.Empty {
		console.Render(w, r, status, "Review the change", u.tmpl, "preview", p)
		return
	}
	if err := config.WriteFile(u.opts.ConfigPath, data); err != nil {
		p.Problem = "Nothing was written: " + err.Error()
		console.Render(w, r, http.StatusInternalServerError, "Review the change", u.tmpl, "preview", p)
		return
	}
	u.writes.Inc()
	settings := make([]string, len(p.Edits))
	for i, e := range p.Edits {
		settings[i] = e.Setting.String() + "=" + e.Value
	}
	u.log.Info("configuration written", "file", u.opts.ConfigPath, "by", console.Who(r), "settings", strings.Join(settings, " "),
		"enabled", p.EnableKey)
	http.Redirect(w, r, "/tools?written=1", http.StatusSeeOther)
}
