package toolgate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// Row is one line of inspect's table.
type Row struct {
	Name     string   `json:"name"`
	Method   string   `json:"method"`
	Path     string   `json:"path"`
	Risk     string   `json:"risk"`
	Reasons  []string `json:"reasons"`
	Override bool     `json:"risk_override"`
	// Review is true where the evidence about the class disagrees, and
	// ReviewReasons says how: these tools are the ones to check first.
	Review        bool     `json:"review"`
	ReviewReasons []string `json:"review_reasons,omitempty"`
	Exposed       bool     `json:"exposed"`
	// Confirm is true when a person accepts each call before it is sent.
	Confirm  bool   `json:"confirm"`
	Exposure string `json:"exposure"`
	// ExposureRule is the rule that decided Exposed.
	ExposureRule string `json:"exposure_rule"`
	Retry        string `json:"retry"`
	// Deadline bounds each call, as a duration in text and in seconds
	// in JSON.
	Deadline        string  `json:"-"`
	DeadlineSeconds float64 `json:"deadline_seconds"`
	// RateLimit says how often the tool may be called, and by which
	// setting ([Tool.RateLimit]).
	RateLimit string `json:"rate_limit"`
	// Auth says in a few words what a call authenticates with (see
	// Security.Configured); AuthRequires what the document requires;
	// AuthUses each scheme used and where its credential comes from;
	// AuthMissing the schemes nothing is configured for.
	Auth         string   `json:"auth"`
	AuthRequires string   `json:"auth_requires"`
	AuthUses     []string `json:"auth_uses,omitempty"`
	AuthMissing  []string `json:"auth_missing,omitempty"`
}

// SchemeRow is one of the document's security schemes, for inspect: what
// it is, and what the configuration gives for it.
type SchemeRow struct {
	Name string `json:"name"`
	What string `json:"what"`
	// Configured says what the configuration gives, or what to write
	// when it gives nothing; Tools counts the exposed tools that use or
	// miss it.
	Configured string `json:"configured"`
	Missing    bool   `json:"missing"`
	Tools      int    `json:"exposed_tools"`
}

// Summary totals a catalog for inspect.
type Summary struct {
	Tools   int `json:"tools"`
	Exposed int `json:"exposed"`
	// Confirm counts the exposed tools a person confirms each call of.
	Confirm int            `json:"confirm"`
	ByClass map[string]int `json:"by_class"`
	// ExposedByClass counts the exposed tools per class.
	ExposedByClass map[string]int `json:"exposed_by_class"`
	// ListBytes is the size of the tools/list answers, all pages, and
	// ListTokens an estimate of it in tokens (a token per 4 bytes);
	// ListPages counts the pages, and LargestPage is the largest's size.
	ListBytes   int `json:"tools_list_bytes"`
	ListTokens  int `json:"tools_list_tokens"`
	ListPages   int `json:"tools_list_pages"`
	LargestPage int `json:"tools_list_largest_page_bytes"`
	// SearchListBytes is the size of the tools/list answer in search
	// mode (serve --mode search).
	SearchListBytes int `json:"search_tools_list_bytes"`
	// Schemes are the document's security schemes.
	Schemes []SchemeRow `json:"schemes"`
	// Review names the tools flagged for review.
	Review   []string `json:"review"`
	Warnings []string `json:"warnings"`
	// Notes say what loading changed in the document's schemas so that
	// clients accept them (spec.Document.Notes).
	Notes []string `json:"notes"`
}

// RetryText says in words how a tool's calls may be retried.
func RetryText(t *Tool) string {
	switch {
	case t.Retry == retry.OptedIn:
		return "opted in: retried with one Idempotency-Key"
	case t.Retry == retry.ByMethod && retry.IsSafeMethod(t.Method):
		return "transient failures retried"
	case !t.Journaled():
		return "only if not sent"
	}
	return "only if not sent (ambiguous otherwise)"
}

// Inspect returns the catalog's rows and summary.
func (c *Catalog) Inspect() ([]Row, Summary, error) {
	s := Summary{ByClass: map[string]int{}, ExposedByClass: map[string]int{}, Review: []string{}, Warnings: []string{}}
	rows := make([]Row, 0, len(c.Tools))
	for _, t := range c.Tools {
		rows = append(rows, Row{Name: t.Name, Method: t.Method, Path: t.Path, Risk: t.Risk.Class.String(), Reasons: t.Risk.Reasons,
			Override: t.RiskOverride, Review: len(t.Risk.Review) > 0, ReviewReasons: t.Risk.Review,
			Exposed: t.Exposed, Confirm: t.Confirm, Exposure: t.Exposure, ExposureRule: t.ExposureRule, Retry: RetryText(t), Deadline: t.Deadline.String(), DeadlineSeconds: t.Deadline.Seconds(), RateLimit: RateLimitText(t),
			Auth: t.Auth.Configured(), AuthRequires: t.Auth.Requires, AuthMissing: t.Auth.Missing})
		for _, u := range t.Auth.Uses {
			rows[len(rows)-1].AuthUses = append(rows[len(rows)-1].AuthUses, u.String())
		}
		if len(t.Risk.Review) > 0 {
			s.Review = append(s.Review, t.Name)
		}
		s.Tools++
		s.ByClass[t.Risk.Class.String()]++
		if t.Exposed {
			s.Exposed++
			s.ExposedByClass[t.Risk.Class.String()]++
		}
		if t.Confirm {
			s.Confirm++
		}
	}
	pages, err := c.ListPages()
	if err != nil {
		return nil, s, err
	}
	for _, p := range pages {
		s.ListBytes += len(p)
		s.LargestPage = max(s.LargestPage, len(p))
	}
	s.ListPages, s.ListTokens = len(pages), s.ListBytes/4
	search, err := c.SearchListJSON()
	if err != nil {
		return nil, s, err
	}
	s.SearchListBytes = len(search)
	switch {
	case s.Exposed > 128:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d tools exposed: some clients keep only the first 128, many work badly past 40; narrow the surface: defaults: {expose: none} and a tag rule per tag to serve (tags: {TAG: {expose: true}}), or serve --mode search", s.Exposed))
	case s.Exposed > 40:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d tools exposed: some clients work badly past 40; consider narrowing the surface (defaults.expose: none or read, and tag rules)", s.Exposed))
	}
	if s.ListTokens > 100_000 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("tools/list is about %d tokens: more than many models' whole context; narrow the surface, or serve --mode search (%d bytes)", s.ListTokens, s.SearchListBytes))
	}
	s.Notes = []string{}
	for _, n := range c.Doc.Notes() {
		s.Notes = append(s.Notes, n.String())
	}
	for _, t := range c.Tools {
		if t.Exposed && t.Risk.Class >= risk.Destructive {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s (%s) is exposed: %s", t.Name, t.Risk.Class, t.Exposure))
		}
	}
	s.Schemes = c.schemeRows()
	for _, r := range s.Schemes {
		if r.Missing {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s require %s (%s), and the configuration gives %s; serve refuses to start until it does",
				plural(r.Tools, "exposed tool"), r.Name, r.What, r.Configured))
		}
	}
	s.Warnings = append(s.Warnings, elsewhere(c, c.upstream)...)
	return rows, s, nil
}

// schemeRows describes the document's security schemes and what the
// configuration gives for each.
func (c *Catalog) schemeRows() []SchemeRow {
	rows := []SchemeRow{}
	for _, name := range slices.Sorted(maps.Keys(c.Doc.SecuritySchemes)) {
		r := SchemeRow{Name: name, What: c.Doc.SecuritySchemes[name].String()}
		for _, t := range c.Exposed() {
			for _, u := range t.Auth.Uses {
				if u.Scheme == name {
					r.Tools++
					r.Configured = strings.TrimPrefix(u.String(), name+": ")
				}
			}
			for i, m := range t.Auth.Missing {
				if m == name {
					r.Tools++
					r.Missing, r.Configured = true, "nothing; write upstream."+t.Auth.Fix[i]
				}
			}
		}
		if r.Configured == "" {
			r.Configured = "not used by an exposed tool"
		}
		rows = append(rows, r)
	}
	return rows
}
