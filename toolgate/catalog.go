// Package toolgate turns an OpenAPI document into MCP tools for LLM agents,
// safe by default: every operation is classified (read, write, destructive,
// privileged) with its reasons; destructive and privileged tools are hidden
// unless the configuration enables them; each tool has a retry policy and a
// deadline that follow rubicon's rules.
package toolgate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	// Schemas are encoded with the decoder's sibling from segmentio: on a
	// large API they are most of the time to the first tools/list.
	json "github.com/segmentio/encoding/json"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/risk"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Tool is one operation as an agent sees it, with the decisions about it.
type Tool struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	Tags        []string `json:"tags,omitempty"`

	Risk risk.Assessment `json:"risk"`
	// RiskOverride is true when the configuration set the class.
	RiskOverride bool `json:"risk_override"`
	Exposed      bool `json:"exposed"`
	// Exposure says why the tool is exposed or hidden, and ExposureRule
	// which rule decided: "tools.NAME.expose", "tags.TAG.expose",
	// "defaults.expose", or "built-in" (destructive and privileged tools
	// are hidden unless a rule names them).
	Exposure     string `json:"exposure"`
	ExposureRule string `json:"exposure_rule"`
	// Confirm is true when each call is sent only once a person has
	// accepted it; ConfirmTimeout bounds the wait for their answer, before
	// the deadline starts.
	Confirm        bool          `json:"confirm"`
	ConfirmTimeout time.Duration `json:"-"`
	// Retry is how a call may be retried once sent; Deadline bounds every
	// call, attempts and waits included.
	Retry    retry.Mode    `json:"-"`
	Deadline time.Duration `json:"-"`
	// Guard says which calls an open call of the tool holds back.
	Guard config.Guard `json:"-"`

	Annotations Annotations `json:"annotations"`

	op *spec.Operation
}

// Annotations are the MCP tool annotations, always set explicitly.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Journaled reports whether calls of t are recorded in the journal and
// held back by the guard while an earlier one is open: those of every
// tool above read, and of a read whose retry mode says that its calls
// count even so (not_sent_only: a GET that costs money; opted_in: the
// upstream dedupes it by key). Only a read retried by its method is not.
// A journaled call is judged as a write: it follows no redirect, and an
// answer that does not prove the outcome leaves it ambiguous.
func (t *Tool) Journaled() bool { return t.Risk.Class > risk.Read || t.Retry != retry.ByMethod }

// Operation returns the tool's operation.
func (t *Tool) Operation() *spec.Operation { return t.op }

// Catalog is every tool of a document under a configuration.
type Catalog struct {
	Doc    *spec.Document
	Tools  []*Tool
	byName map[string]*Tool
}

// Lookup returns the tool with name, exposed or hidden, or nil.
func (c *Catalog) Lookup(name string) *Tool { return c.byName[name] }

// Callable returns the exposed tool with name, or nil. It is how a call
// finds its tool: a hidden tool is not listed, and is unknown by name too.
func (c *Catalog) Callable(name string) *Tool {
	if t := c.byName[name]; t != nil && t.Exposed {
		return t
	}
	return nil
}

// Exposed returns the exposed tools, in name order.
func (c *Catalog) Exposed() []*Tool {
	var out []*Tool
	for _, t := range c.Tools {
		if t.Exposed {
			out = append(out, t)
		}
	}
	return out
}

// Build makes the catalog of doc under cfg. Configuration entries that
// name no tool or tag are errors: a misspelt name must not leave a tool
// exposed, or hidden, unnoticed.
func Build(doc *spec.Document, cfg *config.Config) (*Catalog, error) {
	c := &Catalog{Doc: doc, byName: map[string]*Tool{}}
	for i, name := range toolNames(doc.Operations) {
		op := doc.Operations[i]
		t := &Tool{Name: name, op: op, Method: op.Method, Path: op.Path, Tags: op.Tags,
			Title: title(op), Description: description(op)}
		c.Tools = append(c.Tools, t)
		c.byName[name] = t
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].Name < c.Tools[j].Name })

	tags := map[string]bool{}
	for _, op := range doc.Operations {
		for _, tag := range op.Tags {
			tags[tag] = true
		}
	}
	for name := range cfg.Tools {
		if c.byName[name] == nil {
			return nil, fmt.Errorf("toolgate: the configuration names tool %q, which the document does not have (run inspect for the names)", name)
		}
	}
	for tag := range cfg.Tags {
		if !tags[tag] {
			return nil, fmt.Errorf("toolgate: the configuration names tag %q, which no operation has", tag)
		}
	}
	for _, t := range c.Tools {
		decide(t, doc, cfg)
	}
	return c, nil
}

// decide applies the risk engine, the configuration and the exposure
// policy to t.
func decide(t *Tool, doc *spec.Document, cfg *config.Config) {
	t.Risk = risk.Assess(t.op, doc)
	t.Deadline, t.ConfirmTimeout = cfg.Deadline, cfg.ConfirmTimeout
	tool, hasTool := cfg.Tools[t.Name]
	var tagRules []config.Rule
	var tagNames []string
	for _, tag := range t.Tags {
		if r, ok := cfg.Tags[tag]; ok {
			tagRules = append(tagRules, r)
			tagNames = append(tagNames, tag)
		}
	}
	if hasTool && tool.Risk != nil {
		t.Risk.Reasons = append(t.Risk.Reasons, fmt.Sprintf("set to %s by the configuration (was %s)", *tool.Risk, t.Risk.Class))
		t.Risk.Class, t.RiskOverride = *tool.Risk, true
	} else {
		for _, r := range tagRules {
			if r.Risk != nil {
				t.Risk.Reasons = append(t.Risk.Reasons, fmt.Sprintf("set to %s by its tag's configuration (was %s)", *r.Risk, t.Risk.Class))
				t.Risk.Class, t.RiskOverride = *r.Risk, true
				break
			}
		}
	}
	for _, r := range tagRules {
		if r.Deadline > 0 {
			t.Deadline = r.Deadline
		}
		if r.ConfirmTimeout > 0 {
			t.ConfirmTimeout = r.ConfirmTimeout
		}
	}
	if hasTool && tool.Deadline > 0 {
		t.Deadline = tool.Deadline
	}
	if hasTool && tool.ConfirmTimeout > 0 {
		t.ConfirmTimeout = tool.ConfirmTimeout
	}
	t.Retry = retry.ByMethod
	if t.Risk.Class > risk.Read && retry.IsSafeMethod(t.Method) {
		// HTTP says a GET is safe to repeat; the document or the
		// configuration says this one is more than a read. Believe them.
		t.Retry = retry.NotSentOnly
	}
	if hasTool && tool.Retry != nil {
		t.Retry = *tool.Retry
	}
	t.Guard = config.GuardResource
	if hasTool && tool.Guard != "" {
		t.Guard = tool.Guard
	}

	var toolExpose *config.Exposure
	if hasTool {
		toolExpose = tool.Expose
	}
	d := expose(t, cfg, toolExpose, tagNames, tagRules)
	t.Exposed, t.Confirm, t.Exposure, t.ExposureRule = d.shown, d.shown && d.confirm, d.why, d.rule

	m, readOnly := t.Method, t.Risk.Class == risk.Read
	t.Annotations = Annotations{
		ReadOnly:    readOnly,
		Destructive: t.Risk.Class >= risk.Destructive,
		// A safe method that is more than a read is not known to be
		// idempotent either.
		Idempotent: m == "PUT" || m == "DELETE" || retry.IsSafeMethod(m) && readOnly,
		OpenWorld:  true,
	}
}

// exposure is the decision about showing a tool: whether it is shown,
// whether each call waits for a person's confirmation, why, and by which
// rule.
type exposure struct {
	shown, confirm bool
	why, rule      string
}

// expose decides whether t is shown, with confirmation or not, why, and by
// which rule: the tool's own rule; else its tags' rules, where the
// narrowest wins (a tag rule never widens what another of the tool's tags
// hides, nor drops a confirmation another asks for); else the default,
// which never shows a destructive or privileged tool.
func expose(t *Tool, cfg *config.Config, tool *config.Exposure, tags []string, rules []config.Rule) exposure {
	c := t.Risk.Class
	if tool != nil {
		rule := "tools." + t.Name + ".expose"
		switch {
		case tool.Confirm.Has(c):
			return exposure{true, true, fmt.Sprintf("enabled by %s: %s: a person accepts each call", rule, tool.As), rule}
		case tool.Classes.Has(c):
			return exposure{true, false, fmt.Sprintf("enabled by %s: %s", rule, tool.As), rule}
		}
		return exposure{false, false, fmt.Sprintf("hidden by %s: %s", rule, tool.As), rule}
	}
	shown, confirmed := -1, -1
	for i, r := range rules {
		if r.Expose == nil {
			continue
		}
		rule := "tags." + tags[i] + ".expose"
		switch {
		case r.Expose.Confirm.Has(c):
			if confirmed < 0 {
				confirmed = i
			}
		case r.Expose.Classes.Has(c):
			if shown < 0 {
				shown = i
			}
		case c >= risk.Destructive && r.Expose.Classes != 0:
			return exposure{why: fmt.Sprintf("hidden: %s: %s shows %s tools, not %s ones; name %s in the tag's list, or enable this tool with tools.%s.expose: true (or confirm)",
				rule, r.Expose.As, r.Expose.Classes, c, c, t.Name), rule: rule}
		default:
			return exposure{why: fmt.Sprintf("hidden by %s: %s (a %s tool)", rule, r.Expose.As, c), rule: rule}
		}
	}
	switch {
	case confirmed >= 0:
		rule := "tags." + tags[confirmed] + ".expose"
		return exposure{true, true, fmt.Sprintf("exposed by %s: %s: a person accepts each call", rule, rules[confirmed].Expose.As), rule}
	case shown >= 0:
		rule := "tags." + tags[shown] + ".expose"
		return exposure{true, false, fmt.Sprintf("exposed by %s: %s", rule, rules[shown].Expose.As), rule}
	case c >= risk.Destructive:
		return exposure{why: fmt.Sprintf("hidden: %s tools are never exposed by default; enable this one with tools.%s.expose: true, "+
			"or confirm to have a person accept each call", c, t.Name), rule: "built-in"}
	case cfg.Expose.Confirm.Has(c):
		return exposure{true, true, fmt.Sprintf("exposed by defaults.expose: %s: a person accepts each call", cfg.Expose.As), "defaults.expose"}
	case cfg.Expose.Classes.Has(c):
		return exposure{true, false, fmt.Sprintf("exposed by defaults.expose: %s", cfg.Expose.As), "defaults.expose"}
	}
	return exposure{why: fmt.Sprintf("hidden by defaults.expose: %s (a %s tool)", cfg.Expose.As, c), rule: "defaults.expose"}
}

// validName is MCP's rule for tool names.
var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ValidName reports whether name satisfies MCP's rule for tool names.
func ValidName(name string) bool { return validName.MatchString(name) }

var (
	notNameChar = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
	underscores = regexp.MustCompile(`__+`)
)

// toolNames returns a name for each operation: its operationId (or method
// and path) with every character MCP does not allow replaced by "_", cut
// to 128 characters, and made unique in a stable order.
func toolNames(ops []*spec.Operation) []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		base := op.ID
		if base == "" {
			base = strings.ToLower(op.Method) + "_" + op.Path
		}
		n := strings.Trim(underscores.ReplaceAllString(notNameChar.ReplaceAllString(base, "_"), "_"), "_")
		if n == "" {
			n = strings.ToLower(op.Method)
		}
		if len(n) > 128 {
			sum := sha256.Sum256([]byte(base))
			n = n[:119] + "_" + hex.EncodeToString(sum[:4])
		}
		names[i] = n
	}
	// Duplicates keep their name in method-and-path order, the first
	// unchanged, so that names are stable across runs.
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		oa, ob := ops[order[a]], ops[order[b]]
		return oa.Path+" "+oa.Method < ob.Path+" "+ob.Method
	})
	used := map[string]bool{}
	for _, i := range order {
		n := names[i]
		for k := 2; used[n]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			n = names[i][:min(len(names[i]), 128-len(suffix))] + suffix
		}
		used[n] = true
		names[i] = n
	}
	return names
}

func title(op *spec.Operation) string {
	if op.Summary != "" {
		return op.Summary
	}
	return op.Method + " " + op.Path
}

// description is what the agent reads about the tool: the document's
// words, cut to a length that keeps tools/list affordable.
func description(op *spec.Operation) string {
	d := strings.TrimSpace(op.Description)
	if d == "" {
		d = op.Summary
	}
	d = truncate(d, 1000)
	if op.Deprecated {
		d = "Deprecated. " + d
	}
	return d
}

// InputSchema returns the JSON Schema of the tool's arguments: its path,
// query, header and cookie parameters (see arguments for their names), and
// the request body as "body". A file in a multipart body, or a binary
// body, is an object with the file's name and its content in base64.
func (c *Catalog) InputSchema(t *Tool) (json.RawMessage, error) {
	props := map[string]any{}
	var required []string
	args, body := arguments(t.op)
	for _, a := range args {
		p := a.param
		s, err := c.Doc.Schema(p.Schema, t.op.Where)
		if err != nil {
			return nil, err
		}
		props[a.name] = withDescription(s, p.Description, a.name, p)
		if p.Required {
			required = append(required, a.name)
		}
	}
	if b := t.op.Body; b != nil {
		s, err := c.bodySchema(t)
		if err != nil {
			return nil, err
		}
		props[body] = s
		if b.Required {
			required = append(required, body)
		}
	}
	sort.Strings(required)
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	return json.Marshal(schema)
}

// Output schemas are given whole or not at all: past these sizes, one
// costs an agent more tokens than it helps, and a schema cut short would
// describe the answer wrongly.
const (
	maxOutputNodes = 400
	maxOutputBytes = 8 << 10
)

// OutputSchema returns the schema of the tool's success answer, if the
// document gives an object schema for it (MCP wants an object) of at most
// 8 KiB.
func (c *Catalog) OutputSchema(t *Tool) (json.RawMessage, error) {
	if len(t.op.Output) == 0 {
		return nil, nil
	}
	s, err := c.Doc.SchemaWhole(t.op.Output, t.op.Where, maxOutputNodes)
	if err != nil {
		return nil, err
	}
	if m, ok := s.(map[string]any); !ok || m["type"] != "object" {
		return nil, nil
	}
	out, err := json.Marshal(s)
	if err != nil || len(out) > maxOutputBytes {
		return nil, err
	}
	return out, nil
}

// BodyArgument is the argument that carries the request body: "body",
// unless a parameter's argument already has that name.
func BodyArgument(t *Tool) string {
	_, body := arguments(t.op)
	return body
}

// withDescription adds a parameter's description, and where it goes when
// that is not plain from the argument's name, to its schema, which it
// copies rather than change: schemas share parts.
func withDescription(schema any, desc, arg string, p *spec.Parameter) any {
	m, ok := schema.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	var where string
	switch {
	case p.In == "header":
		where = "(sent as the header " + p.Name + ")"
	case p.In == "cookie":
		where = "(sent as the cookie " + p.Name + ")"
	case arg != p.Name:
		where = fmt.Sprintf("(sent as the %s parameter %q; the argument %q is another parameter of that name)", p.In, p.Name, p.Name)
	}
	if (desc == "" || m["description"] != nil) && where == "" {
		return m
	}
	m = maps.Clone(m)
	if _, ok := m["description"]; !ok && desc != "" {
		m["description"] = truncate(desc, 300)
	}
	if where != "" {
		m["description"] = strings.TrimSpace(fmt.Sprintf("%v %s", valueOr(m["description"], ""), where))
	}
	return m
}

// truncate cuts s to at most n bytes, on a character boundary, and marks
// the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func valueOr(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}
