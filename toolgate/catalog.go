// Package toolgate turns an OpenAPI document into MCP tools for LLM agents,
// safe by default: every operation is classified (read, write, destructive,
// privileged) with its reasons; destructive and privileged tools are hidden
// unless the configuration enables them; each tool has a retry policy and a
// deadline that follow rubicon's rules.
package toolgate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
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
	// RateLimit limits the tool's calls, and RateRule is the setting that
	// decided it: "tools.NAME.rate_limit", "tags.TAG.rate_limit" (whose
	// tools share one bucket) or "defaults.rate_limit.CLASS".
	RateLimit config.RateLimit `json:"-"`
	RateRule  string           `json:"-"`
	// Replay is how long after a call was applied an identical one is
	// answered from the journal instead of sent; 0 never.
	Replay time.Duration `json:"-"`
	// Auth is what the tool's operation requires to authenticate, and
	// what the configuration gives for it.
	Auth Security `json:"-"`

	// ConfigName is the name under which the configuration's tools
	// section gives the tool's own rule: its name, its operationId or its
	// former name; empty when it has no rule there.
	ConfigName string `json:"-"`

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
	// byAlias finds a tool by the other names a configuration may give
	// it: its operationId, and its name as it was before names were cut
	// to 64 characters.
	byAlias map[string]*Tool
	// upstream is the configuration's upstream section.
	upstream config.Upstream
}

// Lookup returns the tool with name, exposed or hidden, or nil.
func (c *Catalog) Lookup(name string) *Tool { return c.byName[name] }

// RuleName is the name of the tool's own rule in the configuration's
// tools section: the one the file uses, or the tool's name for a rule
// still to be written.
func (t *Tool) RuleName() string {
	if t.ConfigName != "" {
		return t.ConfigName
	}
	return t.Name
}

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
	c := &Catalog{Doc: doc, byName: map[string]*Tool{}, byAlias: map[string]*Tool{}, upstream: cfg.Upstream}
	long := toolNames(doc.Operations, maxLongName)
	for i, name := range toolNames(doc.Operations, MaxNameLength) {
		op := doc.Operations[i]
		t := &Tool{Name: name, op: op, Method: op.Method, Path: op.Path, Tags: op.Tags,
			Title: title(op), Description: description(op)}
		c.Tools = append(c.Tools, t)
		c.byName[name] = t
	}
	// An alias that is another tool's name, or that two tools share,
	// names neither.
	shared := map[string]bool{}
	for i, t := range c.Tools {
		for _, alias := range []string{long[i], t.op.ID} {
			if alias == "" || c.byName[alias] != nil {
				continue
			}
			if other := c.byAlias[alias]; other != nil && other != t {
				shared[alias] = true
			}
			c.byAlias[alias] = t
		}
	}
	for alias := range shared {
		delete(c.byAlias, alias)
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].Name < c.Tools[j].Name })

	tags := map[string]bool{}
	for _, op := range doc.Operations {
		for _, tag := range op.Tags {
			tags[tag] = true
		}
	}
	rules := map[*Tool]string{} // each configured tool's key in cfg.Tools
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		t := c.byName[name]
		if t == nil {
			t = c.byAlias[name]
		}
		if t == nil {
			return nil, fmt.Errorf("the configuration names tool %q, which the document does not have (run inspect for the names)", name)
		}
		if other, ok := rules[t]; ok {
			return nil, fmt.Errorf("the configuration names tool %s twice, as %q and as %q; keep one", t.Name, other, name)
		}
		rules[t] = name
		t.ConfigName = name
	}
	for tag := range cfg.Tags {
		if !tags[tag] {
			return nil, fmt.Errorf("the configuration names tag %q, which no operation has", tag)
		}
	}
	if err := checkSchemes(doc, cfg.Upstream); err != nil {
		return nil, err
	}
	for _, t := range c.Tools {
		decide(t, doc, cfg, rules[t])
	}
	return c, nil
}

// decide applies the risk engine, the configuration and the exposure
// policy to t, whose own rule is cfg.Tools[key], if key is not empty.
func decide(t *Tool, doc *spec.Document, cfg *config.Config, key string) {
	t.Risk = risk.Assess(t.op, doc)
	t.Auth = security(t.op, doc, cfg.Upstream)
	t.Deadline, t.ConfirmTimeout = cfg.Deadline, cfg.ConfirmTimeout
	tool, hasTool := cfg.Tools[key]
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
	rateLimit(t, key, tool, hasTool, tagNames, tagRules, cfg)
	t.Replay = cfg.Replay
	for _, r := range tagRules {
		if r.Replay != nil {
			t.Replay = *r.Replay
		}
	}
	if hasTool && tool.Replay != nil {
		t.Replay = *tool.Replay
	}

	var toolExpose *config.Exposure
	if hasTool {
		toolExpose = tool.Expose
	}
	d := expose(t, cfg, key, toolExpose, tagNames, tagRules)
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

// rateLimit decides t's rate limit: its own rule's (named key), else the
// strictest of its tags', else its class's default.
func rateLimit(t *Tool, key string, tool config.Rule, hasTool bool, tags []string, rules []config.Rule, cfg *config.Config) {
	t.RateLimit, t.RateRule = cfg.RateLimits[t.Risk.Class], "defaults.rate_limit."+t.Risk.Class.String()
	strictest := -1
	for i, r := range rules {
		if r.RateLimit != nil && (strictest < 0 || stricter(*r.RateLimit, *rules[strictest].RateLimit)) {
			strictest = i
		}
	}
	if strictest >= 0 {
		t.RateLimit, t.RateRule = *rules[strictest].RateLimit, "tags."+tags[strictest]+".rate_limit"
	}
	if hasTool && tool.RateLimit != nil {
		t.RateLimit, t.RateRule = *tool.RateLimit, "tools."+key+".rate_limit"
	}
}

// stricter reports whether a allows fewer calls than b.
func stricter(a, b config.RateLimit) bool {
	switch {
	case a.Unlimited():
		return false
	case b.Unlimited() || a.PerMinute != b.PerMinute:
		return b.Unlimited() || a.PerMinute < b.PerMinute
	}
	return a.Burst < b.Burst
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
// which never shows a destructive or privileged tool. key is the name
// the tool's own rule has in the configuration.
func expose(t *Tool, cfg *config.Config, key string, tool *config.Exposure, tags []string, rules []config.Rule) exposure {
	c := t.Risk.Class
	if tool != nil {
		rule := "tools." + key + ".expose"
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

// MaxNameLength is the longest tool name: some clients refuse longer
// ones. maxLongName is MCP's limit, which names were once cut to; a
// configuration may still use those names.
const (
	MaxNameLength = 64
	maxLongName   = 128
)

// toolNames returns a name for each operation: its operationId (or method
// and path) with every character MCP does not allow replaced by "_", cut
// to limit characters, and made unique in a stable order. A name cut
// short ends with "_" and 8 hexadecimal digits of a hash of what it
// stands for, so that it says the same on every load, whatever other
// operations the document has.
func toolNames(ops []*spec.Operation, limit int) []string {
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
		if len(n) > limit {
			sum := sha256.Sum256([]byte(base))
			n = n[:limit-9] + "_" + hex.EncodeToString(sum[:4])
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
			n = names[i][:min(len(names[i]), limit-len(suffix))] + suffix
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

// maxDescription bounds a tool's description, in bytes.
const maxDescription = 400

// description is what the agent reads about the tool: the document's
// words, shortened to what keeps tools/list affordable (spec.Brief), or
// its summary if it has none.
func description(op *spec.Operation) string {
	const deprecated = "Deprecated. "
	n := maxDescription
	if op.Deprecated {
		n -= len(deprecated)
	}
	d := spec.Brief(op.Description, n)
	if d == "" {
		d = spec.Brief(op.Summary, n)
	}
	if op.Deprecated {
		d = deprecated + d
	}
	return d
}

// InputSchema returns the JSON Schema of the tool's arguments: its path,
// query, header and cookie parameters (see arguments for their names), and
// the request body as "body". A file in a multipart body, or a binary
// body, is an object with the file's name and its content in base64. It is
// the schema a call's arguments are checked against.
func (c *Catalog) InputSchema(t *Tool) (json.RawMessage, error) {
	s, _, err := c.inputSchema(t, false, 0)
	return s, err
}

// MaxListedSchema bounds the input schema tools/list gives for a tool, in
// bytes; maxBriefDepth is the deepest a brief schema goes.
const (
	MaxListedSchema = 12 << 10
	maxBriefDepth   = 24
	// maxListedNodes is more subschemas than fit in MaxListedSchema: a
	// subschema and its name take 12 bytes at the least. A brief schema
	// gives up there rather than be built whole to be found too large.
	maxListedNodes = MaxListedSchema / 12
)

// ListedInputSchema returns the input schema as tools/list gives it: as
// deep as fits in MaxListedSchema bytes, with descriptions shortened.
// Each part left out is open (any value of its type), and says which of
// the document's schemas gives its shape; calls are still checked
// against the whole schema (InputSchema). The arguments themselves are
// always listed, each at least with its type.
func (c *Catalog) ListedInputSchema(t *Tool) (json.RawMessage, error) {
	fits := func(depth int) (s json.RawMessage, cut, ok bool, err error) {
		s, cut, err = c.inputSchema(t, true, depth)
		if errors.Is(err, spec.ErrTooLarge) {
			return nil, true, false, nil
		}
		return s, cut, err == nil && len(s) <= MaxListedSchema, err
	}
	// Most schemas fit whole: one pass.
	s, _, ok, err := fits(maxBriefDepth)
	if ok || err != nil {
		return s, err
	}
	// Otherwise the deepest cut that fits, found by halving: a schema
	// grows with its depth. The arguments' types (depth -1) are listed
	// even when they do not fit.
	fit, _, err := c.inputSchema(t, true, -1)
	for lo, hi := -1, maxBriefDepth; hi-lo > 1 && err == nil; {
		depth := (lo + hi) / 2
		var cut bool
		if s, cut, ok, err = fits(depth); !ok {
			hi = depth
			continue
		}
		fit, lo = s, depth
		if !cut {
			break
		}
	}
	return fit, err
}

// inputSchema returns the tool's input schema, brief or whole, and
// whether the brief one was cut. depth counts from the arguments' own
// schemas: 0 is their own keywords, -1 only their types.
func (c *Catalog) inputSchema(t *Tool, brief bool, depth int) (json.RawMessage, bool, error) {
	props := map[string]any{}
	var required []string
	cut := false
	schema := func(raw json.RawMessage) (any, error) {
		if !brief {
			return c.Doc.Schema(raw, t.op.Where)
		}
		s, cuts, err := c.Doc.SchemaBrief(raw, t.op.Where, depth, maxListedNodes)
		cut = cut || cuts
		return s, err
	}
	args, body, choice := arguments(t.op)
	for _, a := range args {
		p := a.param
		s, err := schema(p.Schema)
		if err != nil {
			return nil, false, err
		}
		props[a.name] = withDescription(s, p.Description, a.name, p, brief)
		if p.Required {
			required = append(required, a.name)
		}
	}
	if b := t.op.Body; b != nil {
		s, err := c.bodySchema(t, schema)
		if err != nil {
			return nil, false, err
		}
		props[body] = s
		if b.Required {
			required = append(required, body)
		}
		if choice != "" {
			props[choice] = choiceSchema(b, body)
		}
	}
	sort.Strings(required)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	out, err := json.Marshal(s)
	return out, cut, err
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
	_, body, _ := arguments(t.op)
	return body
}

// withDescription adds a parameter's description (brief, for a list of
// tools), and where it goes when that is not plain from the argument's
// name, to its schema, which it copies rather than change: schemas share
// parts.
func withDescription(schema any, desc, arg string, p *spec.Parameter, brief bool) any {
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
		if brief {
			m["description"] = spec.Brief(desc, maxParameterText)
		} else {
			m["description"] = truncate(desc, 300)
		}
	}
	if where != "" {
		m["description"] = strings.TrimSpace(fmt.Sprintf("%v %s", valueOr(m["description"], ""), where))
	}
	return m
}

// maxParameterText bounds a parameter's description in a listed schema.
const maxParameterText = 200

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
