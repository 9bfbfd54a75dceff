package toolgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// In search mode a hidden tool is neither found, described nor called,
// and what an agent gets for one is what it gets for a name the document
// does not have.
func TestSearchModeHidesWhatToolsModeHides(t *testing.T) {
	t.Parallel()
	api := shopapi.New()
	up := httptest.NewServer(api)
	defer up.Close()
	g, _ := session(t, config.ModeSearch, up.URL, "")
	hidden := []string{"deleteOrder", "refundOrder", "listApiKeys"}
	for _, args := range []map[string]any{
		{"limit": 50}, {"query": "delete an order"}, {"query": "refund order"}, {"query": "list api keys"},
		{"query": "deleteOrder"}, {"method": "DELETE"}, {"path": "/admin"},
	} {
		for _, name := range g.search(t, args) {
			for _, h := range hidden {
				if name == h {
					t.Errorf("search_operations %v found the hidden %s", args, h)
				}
			}
		}
	}
	if got := g.search(t, map[string]any{"limit": 50}); len(got) != 4 {
		t.Errorf("a search without words found %v; want the 4 exposed tools", got)
	}
	ctx := context.Background()
	answer := func(tool, name string) string {
		args := map[string]any{"name": name}
		if tool == toolgate.CallTool {
			args["arguments"] = map[string]any{"id": "o1"}
		}
		res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return strings.ReplaceAll(err.Error(), name, "NAME")
		}
		return fmt.Sprintf("a result (error %v): %s", res.IsError, strings.ReplaceAll(text(res), name, "NAME"))
	}
	for _, tool := range []string{toolgate.DescribeTool, toolgate.CallTool} {
		unknown := answer(tool, "noSuchOperation")
		if !strings.Contains(unknown, `unknown tool "NAME"`) {
			t.Errorf("%s of an unknown name: %s", tool, unknown)
		}
		for _, h := range hidden {
			if got := answer(tool, h); got != unknown {
				t.Errorf("%s of the hidden %s: %q; want what an unknown name gets, %q", tool, h, got, unknown)
			}
		}
	}
	if n := api.Effects(); n != 0 {
		t.Errorf("the upstream applied %d changes, want 0", n)
	}
}

// describe_operation gives a tool as tools mode lists it, with its risk
// class, retry policy, deadline and confirmation.
func TestDescribeOperation(t *testing.T) {
	t.Parallel()
	cfg := "tools: {refundOrder: {expose: confirm, deadline: 5s, confirm_timeout: 1m}, createOrder: {retry: opted_in}}"
	g, _ := session(t, config.ModeSearch, "http://127.0.0.1:1", cfg)
	cat := shop(t, cfg)
	for name, want := range map[string]struct{ risk, retry, deadline, confirmTimeout string }{
		"refundOrder": {"destructive", "only if not sent (ambiguous otherwise)", "5s", "1m0s"},
		"createOrder": {"write", "opted in: retried with one Idempotency-Key", "30s", ""},
		"listOrders":  {"read", "transient failures retried", "30s", ""},
	} {
		res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: toolgate.DescribeTool, Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var d struct {
			Risk, Retry, Deadline string
			Confirm               bool
			ConfirmTimeout        string          `json:"confirm_timeout"`
			InputSchema           json.RawMessage `json:"input_schema"`
			Description           string
		}
		if err := json.Unmarshal([]byte(text(res)), &d); err != nil {
			t.Fatal(err)
		}
		listed, err := cat.MCPTool(cat.Callable(name))
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := json.Marshal(listed.InputSchema)
		if d.Risk != want.risk || d.Retry != want.retry || d.Deadline != want.deadline || d.Confirm != (want.confirmTimeout != "") ||
			d.ConfirmTimeout != want.confirmTimeout || string(d.InputSchema) != string(schema) || d.Description != listed.Description {
			t.Errorf("%s described as %+v; want %+v and the schema and description tools mode lists", name, d, want)
		}
	}
}

// corpusCatalogs returns a catalog of every corpus document that loads,
// and of GitHub's when it is installed, under the defaults.
func corpusCatalogs(t *testing.T) map[string]*toolgate.Catalog {
	t.Helper()
	docs := testspecs.CorpusDocuments(t)
	if p := os.Getenv(testspecs.GitHubEnv); p != "" {
		docs = append(docs, p)
	}
	out := map[string]*toolgate.Catalog{}
	for _, path := range docs {
		doc, err := spec.Load(path)
		if err != nil {
			continue // the documents refused by design (TestCorpusSchemasCompile)
		}
		cat, err := toolgate.Build(doc, config.Default())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[testspecs.Name(path)] = cat
	}
	return out
}

// Search mode's tools/list stays under 10 KB for every document of the
// corpus, and GitHub's, whatever the number of operations.
func TestSearchModeListIsSmall(t *testing.T) {
	t.Parallel()
	for name, cat := range corpusCatalogs(t) {
		list, err := cat.SearchListJSON()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(list) >= 10_000 {
			t.Errorf("%s: search mode's tools/list is %d bytes; want under 10 KB", name, len(list))
		}
		var got struct{ Tools []*mcp.Tool }
		if err := json.Unmarshal(list, &got); err != nil || len(got.Tools) != 3 {
			t.Errorf("%s: %d tools (%v)", name, len(got.Tools), err)
		}
	}
}

// Auto mode serves search mode past 128 tools or 256 KiB of tools/list,
// and says why.
func TestAutoMode(t *testing.T) {
	t.Parallel()
	if mode, why, err := toolgate.ChooseMode(shop(t, ""), config.ModeAuto); err != nil || mode != config.ModeTools ||
		!strings.Contains(why, "4 tools are exposed (search past 128)") {
		t.Errorf("the shop: %s, %q, %v", mode, why, err)
	}
	if mode, why, err := toolgate.ChooseMode(catalog(t, testspecs.Corpus(t, "k8s-swagger.json"), ""), config.ModeAuto); err != nil ||
		mode != config.ModeSearch || !strings.Contains(why, "tools are exposed, more than 128") {
		t.Errorf("Kubernetes: %s, %q, %v", mode, why, err)
	}
	// 100 operations (under 128) whose schemas make a list over 256 KiB.
	var enum, paths []string
	for i := range 400 {
		enum = append(enum, fmt.Sprintf("%q", fmt.Sprintf("value-%05d", i)))
	}
	for i := range 100 {
		paths = append(paths, fmt.Sprintf(`"/a%d": {"get": {"operationId": "op%d", "parameters": [{"name": "v", "in": "query",
		  "schema": {"$ref": "#/components/schemas/V"}}], "responses": {}}}`, i, i))
	}
	doc := `{"openapi": "3.0.0", "paths": {` + strings.Join(paths, ",") + `},
	  "components": {"schemas": {"V": {"type": "string", "enum": [` + strings.Join(enum, ",") + `]}}}}`
	if mode, why, err := toolgate.ChooseMode(catalog(t, doc, ""), config.ModeAuto); err != nil || mode != config.ModeSearch ||
		!strings.Contains(why, "tools/list of the 100 tools exposed is") {
		t.Errorf("100 large tools: %s, %q, %v", mode, why, err)
	}
	for _, m := range []config.Mode{config.ModeTools, config.ModeSearch} {
		if mode, why, err := toolgate.ChooseMode(shop(t, ""), m); mode != m || why != "" || err != nil {
			t.Errorf("%s: %s, %q, %v", m, mode, why, err)
		}
	}
}

// Arguments that do not fit a search-mode tool are refused with what it
// takes, and a call_operation refused so sends nothing.
func TestSearchModeArguments(t *testing.T) {
	t.Parallel()
	api := shopapi.New()
	up := httptest.NewServer(api)
	defer up.Close()
	g, _ := session(t, config.ModeSearch, up.URL, "")
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{toolgate.SearchTool, map[string]any{"limit": "ten"}, "search_operations takes query, tag, method and path, each text, and limit, a whole number from 1 to 50."},
		{toolgate.SearchTool, map[string]any{"words": "orders"}, "search_operations takes query"},
		{toolgate.DescribeTool, map[string]any{}, "describe_operation takes name, the name of an operation as search_operations gives it."},
		{toolgate.CallTool, map[string]any{"arguments": map[string]any{}}, "call_operation takes name, the name of an operation as search_operations gives it, and arguments, an object its input schema (describe_operation) describes. Nothing was sent."},
		{toolgate.CallTool, map[string]any{"name": "createOrder", "body": map[string]any{"sku": "A1", "quantity": 1}}, "call_operation takes name"},
		{toolgate.CallTool, map[string]any{"name": "createOrder", "arguments": "sku=A1"}, "the arguments of createOrder must be a JSON object"},
	} {
		res, err := g.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError || !strings.HasPrefix(text(res), c.want) {
			t.Errorf("%s %v: %v %q; want %q", c.tool, c.args, err, text(res), c.want)
		}
	}
	if n := api.Effects(); n != 0 {
		t.Errorf("the upstream applied %d changes, want 0", n)
	}
}

// search_operations filters by tag, method and path, ranks by words, and
// gives at most the results asked for; without words, in name order.
func TestSearchOperationsFilters(t *testing.T) {
	t.Parallel()
	g, _ := session(t, config.ModeSearch, "http://127.0.0.1:1", "")
	for _, c := range []struct {
		args map[string]any
		want string // the results, or their start when it ends with "…"
	}{
		{map[string]any{"tag": "ORDERS"}, "createOrder getOrder listOrders"},
		{map[string]any{"method": "post"}, "createOrder"},
		{map[string]any{"path": "/categories"}, "getCategory"},
		{map[string]any{"query": "place an order"}, "createOrder …"},
		{map[string]any{"query": "get an order", "method": "GET", "path": "/orders/"}, "getOrder"},
		{map[string]any{"query": "order", "limit": 1}, "createOrder"},
		{map[string]any{"query": "nothing like it"}, ""},
	} {
		got := strings.Join(g.search(t, c.args), " ")
		if prefix, ok := strings.CutSuffix(c.want, "…"); ok && !strings.HasPrefix(got, prefix) || !ok && got != c.want {
			t.Errorf("search_operations %v: %q, want %q", c.args, got, c.want)
		}
	}
}
