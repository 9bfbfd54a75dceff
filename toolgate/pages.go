package toolgate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A page of tools/list holds at most MaxPageTools tools and, past its
// first tool, at most MaxPageBytes bytes of them: far below what clients
// read in one message (the TypeScript SDK's 10 MiB), and a size an agent
// can take in before asking for more.
const (
	MaxPageTools = 100
	MaxPageBytes = 256 << 10
)

// toolPages answers tools/list page by page. A page's cursor is the name
// of its first tool, encoded: the list is in name order, so a cursor
// still finds its place if the server restarts with other tools.
type toolPages struct {
	tools []*mcp.Tool // in name order
	sizes []int       // each tool's size in JSON
}

func newToolPages(tools []*mcp.Tool) (*toolPages, error) {
	p := &toolPages{tools: tools, sizes: make([]int, len(tools))}
	for i, t := range tools {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %v", t.Name, err)
		}
		p.sizes[i] = len(b)
	}
	return p, nil
}

// page returns the tools of the page that cursor starts ("" for the
// first) and the next page's cursor, "" after the last.
func (p *toolPages) page(cursor string) ([]*mcp.Tool, string, error) {
	start := 0
	if cursor != "" {
		name, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("the cursor %q is not one that tools/list gave; list the tools again from the start, without a cursor", cursor)
		}
		start = sort.Search(len(p.tools), func(i int) bool { return p.tools[i].Name >= string(name) })
	}
	end, size := start, 0
	for end < len(p.tools) && end-start < MaxPageTools && (end == start || size+p.sizes[end] <= MaxPageBytes) {
		size += p.sizes[end]
		end++
	}
	if end == len(p.tools) {
		return p.tools[start:end], "", nil
	}
	return p.tools[start:end], base64.RawURLEncoding.EncodeToString([]byte(p.tools[end].Name)), nil
}

// ListPages renders the exposed tools as tools/list answers them, page by
// page, for a client of the protocol versions before cachingVersion.
func (c *Catalog) ListPages() ([][]byte, error) {
	tools, err := c.MCPTools()
	if err != nil {
		return nil, err
	}
	p, err := newToolPages(tools)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	cursor := ""
	for {
		page, next, err := p.page(cursor)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(&toolList{Tools: page, NextCursor: next})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}
