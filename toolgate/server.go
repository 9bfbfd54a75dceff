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
func (c *Catalog) MCPTools() ([]*mcp.Tool, error) {
	exposed := c.Exposed()
	tools := make([]*mcp.Tool, 0, len(exposed))
	for _, t := range exposed {
		in, err := c.InputSchema(t)
		if err != nil {
			return nil, err
		}
		out, err := c.OutputSchema(t)
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
	withOutput := map[string]bool{}
	for _, t := range tools {
		if t.OutputSchema != nil {
			withOutput[t.Name] = true
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "toolgate", Title: cat.Doc.Title, Version: Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				// One page: the list is built once and never changes.
				return listResult(req, tools), nil
			case "tools/call":
				p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
				if !ok || p == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params"}
				}
				t := cat.Lookup(p.Name)
				if t == nil || !t.Exposed {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
				}
				return result(caller.Call(ctx, p.Name, p.Arguments), withOutput[p.Name]), nil
			}
			return next(ctx, method, req)
		}
	})
	return s, nil
}

// result turns a call's result into MCP's. A tool with an output schema
// answers structured content on success, as MCP requires.
func result(r Result, hasOutput bool) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
	if hasOutput && !r.IsError {
		if r.Structured != nil {
			res.StructuredContent = r.Structured
		} else {
			res.StructuredContent = map[string]any{}
		}
	}
	return res
}

// cachingVersion is the first protocol version whose list results carry
// cache fields (ttlMs, cacheScope). A request that uses it or a later one
// says so in its _meta.
const cachingVersion = "2026-07-28"

// toolList is tools/list's answer before cachingVersion. The SDK's result
// type always carries the cache fields, which those versions do not have.
type toolList struct {
	mcp.ResultBase
	Tools []*mcp.Tool `json:"tools"`
}

// listResult answers tools/list in the form of the request's protocol
// version. From cachingVersion on, the cache fields are set: the list is
// the same whoever asks (public), and a client should not keep it once
// used (a TTL of 0), since toolgate may be restarted with another
// configuration and says nothing when it is.
func listResult(req mcp.Request, tools []*mcp.Tool) mcp.Result {
	if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil {
		if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= cachingVersion {
			return &mcp.ListToolsResult{Tools: tools, Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "public"}}
		}
	}
	return &toolList{Tools: tools}
}

// ListJSON renders the exposed tools as tools/list answers them.
func (c *Catalog) ListJSON() ([]byte, error) {
	tools, err := c.MCPTools()
	if err != nil {
		return nil, err
	}
	return json.Marshal(&toolList{Tools: tools})
}
