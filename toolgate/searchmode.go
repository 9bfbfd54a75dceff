package toolgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// The tools of search mode.
const (
	SearchTool   = "search_operations"
	DescribeTool = "describe_operation"
	CallTool     = "call_operation"
)

// Past these, auto mode serves search mode: more tools than many clients
// keep, or a tools/list that costs a model a large share of its context.
const (
	AutoMaxTools     = 128
	AutoMaxListBytes = 256 << 10
)

// Searches give at most maxResults results, defaultResults unless the
// agent asks for more.
const (
	defaultResults = 10
	maxResults     = 50
)

// ChooseMode returns the mode to serve cat in, and a sentence that says
// why when the mode was auto. Auto is search when more than
// AutoMaxTools tools are exposed or their tools/list is over
// AutoMaxListBytes, and tools otherwise.
func ChooseMode(cat *Catalog, mode config.Mode) (config.Mode, string, error) {
	if mode != config.ModeAuto {
		if mode == "" {
			mode = config.ModeTools
		}
		return mode, "", nil
	}
	n := len(cat.Exposed())
	if n > AutoMaxTools {
		// The list's size is not needed, and on such a surface it costs
		// as much to measure as to serve.
		return config.ModeSearch, fmt.Sprintf("mode auto chose search: %d tools are exposed, more than %d", n, AutoMaxTools), nil
	}
	list, err := cat.ListJSON()
	if err != nil {
		return "", "", err
	}
	if len(list) > AutoMaxListBytes {
		return config.ModeSearch, fmt.Sprintf("mode auto chose search: tools/list of the %s exposed is %d KiB, more than %d KiB", output.Plural(n, "tool"), len(list)>>10, AutoMaxListBytes>>10), nil
	}
	return config.ModeTools, fmt.Sprintf("mode auto chose tools: %s exposed (search past %d) and tools/list is %d KiB (search past %d KiB)",
		output.Plural(n, "tool is", "tools are"), AutoMaxTools, len(list)>>10, AutoMaxListBytes>>10), nil
}

// NewSearchServer returns an MCP server that serves cat's exposed tools in
// search mode, through three tools: search_operations finds them,
// describe_operation gives one's input schema, risk class, retry policy,
// deadline and whether a person confirms each call, and call_operation
// calls one. Only exposed tools are indexed, described and called: a
// hidden one is unknown, as in tools mode. A call goes the way a call of
// a listed tool does (toolCalls), so that confirmation, retries,
// deadlines, the journal and the guard are the same.
func NewSearchServer(cat *Catalog, caller *Caller) (*mcp.Server, error) {
	s := newMCPServer(cat)
	calls := newToolCalls(cat, caller)
	ix := NewIndex(cat.Exposed())
	tools := searchTools(cat)
	pages, err := newToolPages(tools)
	if err != nil {
		return nil, err
	}
	// tools/list is answered as in tools mode, in the form of the
	// request's protocol version.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return listResult(req, pages)
			}
			return next(ctx, method, req)
		}
	})
	for _, st := range tools {
		switch st.Name {
		case SearchTool:
			s.AddTool(st, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct {
					Query, Tag, Method, Path string
					Limit                    int
				}
				if res := decodeArguments(req, SearchTool, &in); res != nil {
					return res, nil
				}
				if in.Limit <= 0 {
					in.Limit = defaultResults
				}
				hits, total := ix.Search(Query{Words: in.Query, Tag: in.Tag, Method: in.Method, Path: in.Path}, min(in.Limit, maxResults))
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: searchAnswer(hits, total, len(ix.tools))}}}, nil
			})
		case DescribeTool:
			s.AddTool(st, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Name string }
				if res := decodeArguments(req, DescribeTool, &in); res != nil {
					return res, nil
				}
				t, err := calls.find(in.Name)
				if err != nil {
					return nil, err
				}
				text, err := describeTool(cat, t)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
		case CallTool:
			s.AddTool(st, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct {
					Name      string
					Arguments json.RawMessage
				}
				if res := decodeArguments(req, CallTool, &in); res != nil {
					return res, nil
				}
				t, err := calls.find(in.Name)
				if err != nil {
					return nil, err
				}
				return calls.call(ctx, req, t, in.Arguments), nil
			})
		}
	}
	return s, nil
}

// decodeArguments reads a search-mode tool's arguments into dst, or
// returns the result that refuses them, saying what the tool takes.
func decodeArguments(req *mcp.CallToolRequest, tool string, dst any) *mcp.CallToolResult {
	takes := map[string]string{
		SearchTool:   fmt.Sprintf("query, tag, method and path, each text, and limit, a whole number from 1 to %d", maxResults),
		DescribeTool: "name, the name of an operation as search_operations gives it",
		CallTool:     "name, the name of an operation as search_operations gives it, and arguments, an object its input schema (describe_operation) describes",
	}[tool]
	refuse := func() *mcp.CallToolResult {
		text := fmt.Sprintf("%s takes %s.", tool, takes)
		if tool == CallTool {
			text += " Nothing was sent."
		}
		return result(Result{IsError: true, Text: text})
	}
	args := bytes.TrimSpace(req.Params.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return refuse()
	}
	if tool != SearchTool {
		var named struct{ Name string }
		json.Unmarshal(args, &named)
		if strings.TrimSpace(named.Name) == "" {
			return refuse()
		}
	}
	return nil
}

// searchTools returns search mode's three tools, told about cat.
func searchTools(cat *Catalog) []*mcp.Tool {
	exposed := cat.Exposed()
	api := cat.Doc.Title
	if api == "" {
		api = "the API"
	}
	destructive, confirm := false, false
	for _, t := range exposed {
		destructive = destructive || t.Risk.Class >= risk.Destructive
		confirm = confirm || t.Confirm
	}
	yes, no := true, false
	searchDesc := fmt.Sprintf("Search the %d operations of %s that this server calls, by what you want to do in a few words "+
		"(\"list orders\", \"refund a charge\"), and by tag, method or path. Each result gives the operation's name, its risk class "+
		"(read, write, destructive or privileged), its method and path, and what it does. Then describe_operation gives its arguments, "+
		"and call_operation calls it.", len(exposed), api)
	if tags := tagList(exposed, 1500); tags != "" {
		searchDesc += " Tags: " + tags + "."
	}
	callDesc := "Call an operation found with search_operations, by its name, with the arguments its input schema " +
		"(describe_operation) gives. Its answer is the API's. Calls that may change state are recorded; a call whose outcome " +
		"is unknown holds back further calls on the same resource until a person settles it."
	if confirm {
		callDesc += " Some operations are shown to a person first, and sent only if they accept (describe_operation says which)."
	}
	return []*mcp.Tool{
		{
			Name: SearchTool, Title: "Search the API's operations", Description: searchDesc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"What you want to do, in a few words."},` +
				`"tag":{"type":"string","description":"Only operations with this tag."},` +
				`"method":{"type":"string","description":"Only operations with this HTTP method, such as GET."},` +
				`"path":{"type":"string","description":"Only operations whose path contains this, such as /orders."},` +
				fmt.Sprintf(`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"How many results at most (default %d)."}`, maxResults, defaultResults) +
				`},"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{Title: "Search the API's operations", ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
		},
		{
			Name: DescribeTool, Title: "Describe an operation",
			Description: "Describe one operation found with search_operations: its input schema, risk class, retry policy, " +
				"deadline, and whether a person confirms each call.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."}},` +
				`"required":["name"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{Title: "Describe an operation", ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
		},
		{
			Name: CallTool, Title: "Call an operation", Description: callDesc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The operation's name, as search_operations gives it."},` +
				`"arguments":{"type":"object","description":"The operation's arguments, as its input schema (describe_operation) says."}},` +
				`"required":["name"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{Title: "Call an operation", DestructiveHint: &destructive, OpenWorldHint: &yes},
		},
	}
}

// tagList names the tags of tools, the most used first, within about
// limit bytes.
func tagList(tools []*Tool, limit int) string {
	count := map[string]int{}
	for _, t := range tools {
		for _, tag := range t.Tags {
			count[tag]++
		}
	}
	tags := make([]string, 0, len(count))
	for tag := range count {
		tags = append(tags, tag)
	}
	sort.Slice(tags, func(i, j int) bool {
		if count[tags[i]] != count[tags[j]] {
			return count[tags[i]] > count[tags[j]]
		}
		return tags[i] < tags[j]
	})
	var b strings.Builder
	for i, tag := range tags {
		if b.Len()+len(tag) > limit {
			fmt.Fprintf(&b, " and %d more", len(tags)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tag)
	}
	return b.String()
}

// searchAnswer is what search_operations answers: one line per result,
// best first.
func searchAnswer(hits []Hit, total, of int) string {
	var b strings.Builder
	switch {
	case total == 0:
		fmt.Fprintf(&b, "No operation matches, of %d. Try other words, or fewer filters.", of)
		return b.String()
	case len(hits) < total:
		fmt.Fprintf(&b, "%d of %d operations match; the best %d:\n", total, of, len(hits))
	default:
		fmt.Fprintf(&b, "%d of %d operations match:\n", total, of)
	}
	for _, h := range hits {
		b.WriteString(resultLine(h.Tool))
		b.WriteByte('\n')
	}
	b.WriteString("describe_operation NAME gives an operation's arguments; call_operation calls it.")
	return b.String()
}

// resultLine is one search result: the tool's name, risk class, method
// and path, and what it does.
func resultLine(t *Tool) string {
	class := t.Risk.Class.String()
	if t.Confirm {
		class += ", a person confirms each call"
	}
	return fmt.Sprintf("%s (%s) %s %s: %s", t.Name, class, t.Method, t.Path, oneLine(t))
}

// oneLine says in a line what t does: its summary, or the first sentence
// of its description.
func oneLine(t *Tool) string {
	s := ""
	if t.op != nil {
		s = t.op.Summary
	}
	if s == "" {
		s = t.Description
		if i := strings.Index(s, ". "); i > 0 {
			s = s[:i+1]
		}
	}
	s = strings.Join(strings.Fields(stripTags(s)), " ")
	if s == "" {
		s = t.Title
	}
	return truncate(s, 120)
}

// stripTags drops HTML tags, which some documents write their
// descriptions in.
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// operationDescription is what describe_operation answers.
type operationDescription struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	Risk        string          `json:"risk"`
	Why         []string        `json:"risk_reasons,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Retry       string          `json:"retry"`
	Deadline    string          `json:"deadline"`
	Confirm     bool            `json:"confirm"`
	// ConfirmTimeout is how long a person has to accept a call, when
	// they confirm each.
	ConfirmTimeout string `json:"confirm_timeout,omitempty"`
	// RateLimit is how often the tool may be called.
	RateLimit   string               `json:"rate_limit"`
	Annotations *mcp.ToolAnnotations `json:"annotations"`
}

// describeTool returns t as describe_operation gives it: as tools mode
// lists it, with its risk class, retry policy, deadline, confirmation and
// rate limit.
func describeTool(cat *Catalog, t *Tool) (string, error) {
	tool, err := cat.MCPTool(t)
	if err != nil {
		return "", err
	}
	in, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return "", err
	}
	d := operationDescription{Name: t.Name, Title: tool.Title, Method: t.Method, Path: t.Path, Risk: t.Risk.Class.String(), Why: t.Risk.Reasons,
		Description: tool.Description, InputSchema: in, Retry: RetryText(t), Deadline: t.Deadline.String(), Confirm: t.Confirm,
		RateLimit: RateLimitText(t), Annotations: tool.Annotations}
	if t.Confirm {
		d.ConfirmTimeout = t.ConfirmTimeout.String()
	}
	out, err := json.Marshal(d)
	return string(out), err
}

// SearchListJSON renders search mode's tools/list answer for cat.
func (c *Catalog) SearchListJSON() ([]byte, error) {
	return json.Marshal(&toolList{Tools: searchTools(c)})
}
