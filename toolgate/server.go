package toolgate

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is toolgate's version, told to MCP clients.
const Version = "0.1.0"

// NewServer returns an MCP server whose tools are cat's exposed tools,
// called through caller. Hidden tools are not listed, and the caller
// refuses them by name as well.
func NewServer(cat *Catalog, caller *Caller) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolgate", Title: cat.Doc.Title, Version: Version}, nil)
	for _, t := range cat.Exposed() {
		in, err := cat.InputSchema(t)
		if err != nil {
			return nil, err
		}
		out, err := cat.OutputSchema(t)
		if err != nil {
			return nil, err
		}
		destructive, openWorld := t.Annotations.Destructive, t.Annotations.OpenWorld
		tool := &mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in,
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.Annotations.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: t.Annotations.Idempotent, OpenWorldHint: &openWorld},
		}
		if out != nil {
			tool.OutputSchema = out
		}
		hasOutput := out != nil
		s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := caller.Call(ctx, req.Params.Name, req.Params.Arguments)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
			if hasOutput && !r.IsError {
				if r.Structured != nil {
					res.StructuredContent = r.Structured
				} else {
					res.StructuredContent = map[string]any{}
				}
			}
			return res, nil
		})
	}
	return s, nil
}
