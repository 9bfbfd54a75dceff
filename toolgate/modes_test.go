package toolgate_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// modes are the two ways a server presents the tools. Every case that
// calls tools through a server runs in both: a call through search mode
// must meet everything a call of a listed tool meets.
var modes = []config.Mode{config.ModeTools, config.ModeSearch}

// inModes runs test once per mode, as a subtest named after it.
func inModes(t *testing.T, test func(t *testing.T, mode config.Mode)) {
	t.Helper()
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) { test(t, m) })
	}
}

// newServer returns toolgate's MCP server of cat in mode.
func newServer(t testing.TB, mode config.Mode, cat *toolgate.Catalog, caller *toolgate.Caller) *mcp.Server {
	t.Helper()
	newServer := toolgate.NewServer
	if mode == config.ModeSearch {
		newServer = toolgate.NewSearchServer
	}
	srv, err := newServer(cat, caller)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// gate is a client's session with a server in one mode.
type gate struct {
	*mcp.ClientSession
	mode config.Mode
}

// params returns the parameters of a call of the tool name with args,
// as an agent makes it in the session's mode: by the tool's name, or
// through call_operation.
func (g *gate) params(name string, args map[string]any) *mcp.CallToolParams {
	if g.mode == config.ModeSearch {
		wrapped := map[string]any{"name": name}
		if args != nil {
			wrapped["arguments"] = args
		}
		return &mcp.CallToolParams{Name: toolgate.CallTool, Arguments: wrapped}
	}
	return &mcp.CallToolParams{Name: name, Arguments: args}
}

// resultName is the tool's name at the start of a line of
// search_operations' answer.
var resultName = regexp.MustCompile(`(?m)^(\S+) \((read|write|destructive|privileged)[,)]`)

// tools returns the tools an agent finds, by name: as listed in tools
// mode; in search mode, every result of a search without words, as
// describe_operation gives it.
func (g *gate) tools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	ctx := context.Background()
	out := map[string]*mcp.Tool{}
	if g.mode != config.ModeSearch {
		list, err := g.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			out[tl.Name] = tl
		}
		return out
	}
	for _, name := range g.search(t, map[string]any{"limit": 50}) {
		res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: toolgate.DescribeTool, Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("describe_operation %s: %v %+v", name, err, res)
		}
		var d struct {
			Name, Description string
			InputSchema       json.RawMessage      `json:"input_schema"`
			Annotations       *mcp.ToolAnnotations `json:"annotations"`
		}
		if err := json.Unmarshal([]byte(text(res)), &d); err != nil {
			t.Fatalf("describe_operation %s: %v", name, err)
		}
		out[d.Name] = &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, Annotations: d.Annotations}
	}
	return out
}

// search calls search_operations with args and returns the names of the
// results, best first.
func (g *gate) search(t *testing.T, args map[string]any) []string {
	t.Helper()
	res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: toolgate.SearchTool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("search_operations %v: %v %+v", args, err, res)
	}
	var names []string
	for _, m := range resultName.FindAllStringSubmatch(text(res), -1) {
		names = append(names, m[1])
	}
	return names
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
