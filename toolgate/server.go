package toolgate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is toolgate's version, told to MCP clients.
const Version = "0.1.0"

// MCPTools returns the exposed tools as tools/list describes them, with
// every annotation set explicitly from the risk class.
//
// No tool declares an output schema. A client validates structured
// content against a declared schema and fails the call when it does not
// conform; an upstream's answer is not guaranteed to match its document,
// so a write that was applied would reach the agent as a failure, and be
// made again. Answers that are JSON objects are still given as structured
// content, which MCP allows without a schema.
func (c *Catalog) MCPTools() ([]*mcp.Tool, error) {
	exposed := c.Exposed()
	tools := make([]*mcp.Tool, 0, len(exposed))
	for _, t := range exposed {
		in, err := c.InputSchema(t)
		if err != nil {
			return nil, err
		}
		destructive, openWorld := t.Annotations.Destructive, t.Annotations.OpenWorld
		tool := &mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in,
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.Annotations.ReadOnly, DestructiveHint: &destructive,
				IdempotentHint: t.Annotations.Idempotent, OpenWorldHint: &openWorld},
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

// NewServer returns an MCP server whose tools are cat's exposed tools,
// called through caller. Hidden tools are not listed, and are unknown when
// called by name; the caller refuses them as well.
//
// The server answers tools/list and tools/call itself rather than through
// the SDK's tool registry, which copies every schema through a round of
// marshalling: on a large API that doubled the time to the first list.
// Everything else (sessions, transports, the protocol) is the SDK's.
func NewServer(cat *Catalog, caller *Caller) (*mcp.Server, error) {
	tools, err := cat.MCPTools()
	if err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "toolgate", Title: cat.Doc.Title, Version: Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				// One page: the list is built once and never changes.
				return &mcp.ListToolsResult{Tools: tools}, nil
			case "tools/call":
				p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
				if !ok || p == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params"}
				}
				t := cat.Lookup(p.Name)
				if t == nil || !t.Exposed {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
				}
				return result(caller.Call(ctx, p.Name, p.Arguments)), nil
			}
			return next(ctx, method, req)
		}
	})
	return s, nil
}

// result turns a call's result into MCP's: the answer as text, and as
// structured content too when it is a JSON object.
func result(r Result) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
	if r.Structured != nil && !r.IsError {
		res.StructuredContent = r.Structured
	}
	return res
}

// ListJSON renders the exposed tools as tools/list answers them.
func (c *Catalog) ListJSON() ([]byte, error) {
	tools, err := c.MCPTools()
	if err != nil {
		return nil, err
	}
	return json.Marshal(&mcp.ListToolsResult{Tools: tools})
}
