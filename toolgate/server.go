package toolgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/version"
)

// Version returns toolgate's version as MCP clients are told it (in
// serverInfo), from the build: what `toolgate version` prints first.
func Version() string { return version.Get().Short() }

// MCPTools returns the exposed tools as tools/list describes them, with
// every annotation set explicitly from the risk class, and each input
// schema as ListedInputSchema bounds it.
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
		tool, err := c.MCPTool(t)
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

// MCPTool returns t as tools/list describes it; search mode describes it
// the same way.
func (c *Catalog) MCPTool(t *Tool) (*mcp.Tool, error) {
	in, err := c.ListedInputSchema(t)
	if err != nil {
		return nil, err
	}
	destructive, openWorld := t.Annotations.Destructive, t.Annotations.OpenWorld
	desc := t.Description
	if t.Confirm {
		// The agent learns why a call can come back unsent.
		desc = strings.TrimSpace(desc + "\n\nEach call is shown to a person first, and sent only if they accept it.")
	}
	return &mcp.Tool{
		Name: t.Name, Title: t.Title, Description: desc, InputSchema: in,
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.Annotations.ReadOnly, DestructiveHint: &destructive,
			IdempotentHint: t.Annotations.Idempotent, OpenWorldHint: &openWorld},
	}, nil
}

// NewServer returns an MCP server whose tools are cat's exposed tools,
// called through caller. Hidden tools are not listed, and are unknown when
// called by name; the caller refuses them as well. A tool that needs a
// person's confirmation asks them through MCP elicitation.
//
// The server answers tools/list and tools/call itself rather than through
// the SDK's tool registry, which copies every schema through a round of
// marshalling: on a large API that doubled the time to the first list.
// Everything else (sessions, transports, the protocol) is the SDK's. Only
// tools that need a confirmation are also registered with the SDK, whose
// tools/call alone can mark a result as one that asks for input (in
// protocols where the server asks in the result and the client calls
// again with the answer); any tool whose calls may need one must be.
func NewServer(cat *Catalog, caller *Caller) (*mcp.Server, error) {
	tools, err := cat.MCPTools()
	if err != nil {
		return nil, err
	}
	pages, err := newToolPages(tools)
	if err != nil {
		return nil, err
	}
	s := newMCPServer(cat)
	calls := newToolCalls(cat, caller)
	// A tool that needs a person's confirmation is called through the
	// SDK's registry, bound to the tool, and asks through elicitation.
	for _, tool := range tools {
		if t := cat.Callable(tool.Name); t.Confirm {
			s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return calls.call(ctx, req, t, req.Params.Arguments), nil
			})
		}
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				// The list is built once and never changes.
				return listResult(req, pages)
			case "tools/call":
				r, ok := req.(*mcp.CallToolRequest)
				if !ok || r.Params == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params"}
				}
				// The tool is found once per call, among the exposed ones.
				t, err := calls.find(r.Params.Name)
				switch {
				case err != nil:
					return nil, err
				case t.Confirm:
					return next(ctx, method, req) // the SDK's, to the tool's handler registered above
				}
				return calls.call(ctx, r, t, r.Params.Arguments), nil
			}
			return next(ctx, method, req)
		}
	})
	return s, nil
}

// newMCPServer returns the MCP server of cat's tools, without any.
func newMCPServer(cat *Catalog) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "toolgate", Title: cat.Doc.Title, Version: Version()},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
}

// toolCalls is the one way a call reaches a tool, whichever way the
// server presents the tools (one MCP tool each, or search mode's
// call_operation): it finds the tool among the exposed ones, and calls it
// through the caller with the client the call came from, whom the caller
// asks when the tool needs a person's confirmation.
type toolCalls struct {
	cat    *Catalog
	caller *Caller
	e      *elicitation
}

func newToolCalls(cat *Catalog, caller *Caller) *toolCalls {
	return &toolCalls{cat: cat, caller: caller, e: newElicitation()}
}

// find returns the exposed tool name, or the error that a call of a tool
// the server does not have gets: a hidden tool is unknown, and nothing
// tells it from one the document does not have.
func (c *toolCalls) find(name string) (*Tool, error) {
	if t := c.cat.Callable(name); t != nil {
		return t, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// call calls t, found by find, with args for the client's request req,
// whose bearer token, over Streamable HTTP, is there for a scheme that
// forwards it.
func (c *toolCalls) call(ctx context.Context, req *mcp.CallToolRequest, t *Tool, args json.RawMessage) *mcp.CallToolResult {
	ctx = withOrigin(ctx, req)
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		if token := clientToken(req.Extra.Header); token != "" {
			ctx = WithClientToken(ctx, token)
		}
	}
	return result(c.caller.Call(ctx, t, args, c.e.at(req)))
}

// result turns a call's result into MCP's: a question that goes back to
// the client, as it is; else the answer as text, and as
// structured content too when it is a JSON object; an answer that is not
// text as an image, audio, or an embedded resource with its media type,
// after the line that says what it is.
func result(r Result) *mcp.CallToolResult {
	if r.input != nil {
		return r.input.result() // a question for the person, to answer by calling again
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
	res.Meta = r.Meta
	if r.Structured != nil && !r.IsError {
		res.StructuredContent = r.Structured
	}
	if m := r.Media; m != nil {
		switch {
		case strings.HasPrefix(m.Type, "image/"):
			res.Content = append(res.Content, &mcp.ImageContent{Data: m.Data, MIMEType: m.Type})
		case strings.HasPrefix(m.Type, "audio/"):
			res.Content = append(res.Content, &mcp.AudioContent{Data: m.Data, MIMEType: m.Type})
		default:
			res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: m.URI, MIMEType: m.Type, Blob: m.Data}})
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
	Tools      []*mcp.Tool `json:"tools"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// listResult answers tools/list with the page the request's cursor asks
// for, in the form of the request's protocol version. From cachingVersion
// on, the cache fields are set: the list is the same whoever asks
// (public), and a client should not keep it once used (a TTL of 0), since
// toolgate may be restarted with another configuration and says nothing
// when it is.
func listResult(req mcp.Request, pages *toolPages) (mcp.Result, error) {
	p, _ := req.GetParams().(*mcp.ListToolsParams)
	var cursor string
	if p != nil {
		cursor = p.Cursor
	}
	tools, next, err := pages.page(cursor)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if p != nil {
		if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v >= cachingVersion {
			return &mcp.ListToolsResult{Tools: tools, NextCursor: next, Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "public"}}, nil
		}
	}
	return &toolList{Tools: tools, NextCursor: next}, nil
}

// ListJSON renders the exposed tools as tools/list would answer them in
// one page.
func (c *Catalog) ListJSON() ([]byte, error) {
	tools, err := c.MCPTools()
	if err != nil {
		return nil, err
	}
	return json.Marshal(&toolList{Tools: tools})
}

// Gateway runs an MCP server over one transport until its context ends,
// and owns what runs beside it: the recovery of the calls that a stopped
// process left in flight.
type Gateway struct {
	// Server is the MCP server ([NewServer], or [NewSearchServer] in
	// search mode) whose tools call through Caller.
	Server *mcp.Server
	Caller *Caller
	// Log receives a line, without a prefix, for each call that recovery
	// finds left in flight, each failure to look, and the HTTP server's
	// errors. Nil discards them.
	Log func(line string)
}

// Lease is how long a call of cat's exposed tools holds its journal
// lease: longer than the longest deadline, so that recovery, here or in
// another process on the same journal, never takes a call still in flight
// for one whose process died.
func Lease(cat *Catalog) time.Duration {
	lease := 30 * time.Second
	for _, t := range cat.Exposed() {
		lease = max(lease, t.Deadline+15*time.Second)
	}
	return lease
}

// ServeStdio serves MCP over in and out until ctx ends or the input does.
// When the input ends, the calls already read are answered first; none
// takes longer than its lease.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go g.recoverCalls(ctx)
	t := &StdioTransport{Reader: in, Writer: out, Drain: Lease(g.Caller.cat)}
	if err := g.Server.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// ServeHTTP serves MCP over Streamable HTTP on ln, with opts, until ctx
// ends; then it stops taking requests and gives those in flight 5 s.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	h, err := HTTPHandler(g.Server, opts)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(lineWriter(g.log), "", 0)}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go g.recoverCalls(ctx)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	}
}

// recoverCalls makes the calls that a stopped process left in flight
// ambiguous, at once and then once per lease, until ctx ends: their
// outcome is unknown, and a person settles them (toolgate calls).
func (g *Gateway) recoverCalls(ctx context.Context) {
	j := g.Caller.journal
	if j == nil {
		return
	}
	for {
		ops, err := j.Recover(ctx)
		if err != nil && ctx.Err() == nil {
			g.log("recovering calls left in flight: " + err.Error())
		}
		for _, op := range ops {
			g.log("call " + op.Key + " was in flight when its process stopped; its outcome is unknown (toolgate calls)")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(j.Lease()):
		}
	}
}

func (g *Gateway) log(line string) {
	if g.Log != nil {
		g.Log(line)
	}
}

// lineWriter hands each line written to it to log.
type lineWriter func(string)

func (w lineWriter) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		w(line)
	}
	return len(p), nil
}
