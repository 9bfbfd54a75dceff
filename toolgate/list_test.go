package toolgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// TestLongNamesAreCutStably checks the name rule: at most 64 characters,
// a name cut short ends with a hash of the whole, the same on every load
// and whatever else the document holds, and still unique when two cut
// names would meet.
func TestLongNamesAreCutStably(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("listNamespacedThings", 5)                     // 100 characters
	other := strings.Repeat("listNamespacedThings", 4) + "AndOtherThings" // the same first 64
	doc := func(extra string) string {
		return `{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
		  "/a": {"get": {"operationId": "` + long + `", "responses": {}}},
		  "/b": {"get": {"operationId": "` + other + `", "responses": {}}}` + extra + `}}`
	}
	first := catalog(t, doc(""), "")
	again := catalog(t, doc(`, "/c": {"get": {"operationId": "short", "responses": {}}}`), "")
	for _, op := range []string{long, other} {
		a, b := toolOf(t, first, op), toolOf(t, again, op)
		if len(a.Name) > toolgate.MaxNameLength || a.Name != b.Name || !toolgate.ValidName(a.Name) {
			t.Errorf("%s is named %q in one load and %q in another; want one valid name of at most 64 characters", op, a.Name, b.Name)
		}
		if a.Name[:55] != op[:55] || a.Name[55] != '_' {
			t.Errorf("%s is named %q; want its first 55 characters, then _ and a hash", op, a.Name)
		}
	}
	if toolOf(t, first, long).Name == toolOf(t, first, other).Name {
		t.Errorf("two operations share the name %s", toolOf(t, first, long).Name)
	}
}

// toolOf returns the tool of the operation with the operationId id.
func toolOf(t *testing.T, cat *toolgate.Catalog, id string) *toolgate.Tool {
	t.Helper()
	for _, tl := range cat.Tools {
		if tl.Operation().ID == id {
			return tl
		}
	}
	t.Fatalf("no tool for the operation %s", id)
	return nil
}

// A configuration written before names were cut to 64 characters still
// names its tools: by the former name, or by the operationId; naming one
// tool twice is an error.
func TestConfigurationNamesToolsByOperationIDOrFormerName(t *testing.T) {
	t.Parallel()
	id := "Get_" + strings.Repeat("very/long.", 9) + "name" // 94 characters, with characters MCP refuses
	former := "Get_" + strings.Repeat("very_long.", 9) + "name"
	doc := `{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
	  "/items/{id}": {"delete": {"operationId": "` + id + `", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {}}}}}`
	name := toolOf(t, catalog(t, doc, ""), id).Name
	if len(name) > 64 {
		t.Fatalf("name %s", name)
	}
	for _, key := range []string{name, id, former} {
		cat := catalog(t, doc, fmt.Sprintf("tools: {%q: {expose: true}}", key))
		tl := cat.Callable(name)
		if tl == nil {
			t.Errorf("tools.%s.expose: true does not expose %s", key, name)
			continue
		}
		if want := "tools." + key + ".expose"; tl.ExposureRule != want {
			t.Errorf("exposed by %s, want %s", tl.ExposureRule, want)
		}
	}
	d, err := spec.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf("tools: {%q: {expose: true}, %q: {expose: false}}", name, id)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolgate.Build(d, cfg); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a tool named twice in the configuration: %v", err)
	}
}

func TestBriefDescriptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"Lists the pods.", "Lists the pods."},
		{"Lists the pods\nin a namespace.\n\nSecond paragraph.", "Lists the pods in a namespace.\n\nSecond paragraph."},
		{"Lists the pods.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter the table.", "Lists the pods.\n\nAfter the table."},
		{"## Heading\nLists.\n\n```json\n{\"a\": 1}\n```\n<!-- hidden\ncomment -->\nEnd.", "Heading Lists.\n\nEnd."},
		{"First sentence here. " + strings.Repeat("word ", 20), "First sentence here."},
		{strings.Repeat("word ", 20), "word word word word word word word word word word word…"},
		{"Short.\n\n" + strings.Repeat("x", 100), "Short."},
	} {
		if got := spec.Brief(tt.text, 60); got != tt.want || len(got) > 60 {
			t.Errorf("Brief(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// The list of Kubernetes' tools comes in pages well under 1 MiB through
// the official Go SDK's client, which follows the cursors; every exposed
// tool comes once, each with its input schema within the bound. A cursor
// toolgate did not give is refused.
func TestKubernetesListInPages(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "k8s-swagger.json"), "")
	caller, _ := caller(t, cat, "http://127.0.0.1:1", config.Auth{}, "")
	srv, err := toolgate.NewServer(cat, caller.Caller)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	seen := map[string]int{}
	pages, largest := 0, 0
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		pages, largest = pages+1, max(largest, len(b))
		if len(res.Tools) > toolgate.MaxPageTools || len(b) > 300<<10 {
			t.Errorf("page %d: %d tools, %d bytes", pages, len(res.Tools), len(b))
		}
		for _, tl := range res.Tools {
			seen[tl.Name]++
			if s, _ := json.Marshal(tl.InputSchema); len(s) > toolgate.MaxListedSchema {
				t.Errorf("%s: input schema of %d bytes", tl.Name, len(s))
			}
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	exposed := cat.Exposed()
	for _, tl := range exposed {
		if seen[tl.Name] != 1 {
			t.Errorf("%s listed %d times", tl.Name, seen[tl.Name])
		}
	}
	if len(seen) != len(exposed) || pages < 2 {
		t.Errorf("%d tools listed in %d pages; %d exposed", len(seen), pages, len(exposed))
	}
	t.Logf("%d tools in %d pages, the largest %d bytes", len(seen), pages, largest)
	// inspect counts the same pages.
	if _, sum, err := cat.Inspect(); err != nil || sum.ListPages != pages || sum.LargestPage > 300<<10 || sum.ListBytes < pages*100<<10 {
		t.Errorf("inspect counts %d pages, %d bytes, the largest %d (%v); the client got %d pages", sum.ListPages, sum.ListBytes, sum.LargestPage, err, pages)
	}
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "not base64!"}); err == nil || !strings.Contains(err.Error(), "from the start") {
		t.Errorf("a cursor toolgate did not give: %v", err)
	}
}

// Kubernetes' Pod is listed cut, with notes that say where the shape of
// each cut part is; a call's arguments are still checked against the whole
// schema, deeper than the cut.
func TestCutSchemaListedWholeSchemaChecked(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "k8s-swagger.json"), "")
	tl := cat.Callable("createCoreV1NamespacedPod")
	listed, err := cat.ListedInputSchema(tl)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := cat.InputSchema(tl)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) > toolgate.MaxListedSchema || len(whole) < 100<<10 {
		t.Fatalf("listed %d bytes, whole %d", len(listed), len(whole))
	}
	for _, want := range []string{spec.BriefCutNote, "io.k8s.api.core.v1.PodSpec in the API's document", "the server checks it in full"} {
		if !strings.Contains(string(listed), want) {
			t.Errorf("the listed schema does not say %q: %s", want, listed)
		}
	}
	if strings.Contains(string(listed), `"containers":`) {
		t.Fatalf("the listed schema describes the pod's containers: the cut is deeper than this test needs")
	}
	// body.spec.containers[0].name must be a string, which only the
	// whole schema says. One caller compiles it once for both calls.
	up := newRecorder(t, nil)
	c, _ := caller(t, cat, up.URL, config.Auth{}, "")
	deep := `{"namespace": "default", "body": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": 5, "image": "nginx"}]}}}`
	if res := callTool(t, c, tl.Name, deep); !res.IsError || !strings.Contains(res.Text, "body.spec.containers[0].name is 5; it must be a string") ||
		!strings.Contains(res.Text, "Nothing was sent") || len(up.requests()) != 0 {
		t.Errorf("a container named 5: %q; the upstream got %d requests", res.Text, len(up.requests()))
	}
	valid := strings.Replace(deep, `"name": 5`, `"name": "web"`, 1)
	if res := callTool(t, c, tl.Name, valid); res.IsError {
		t.Fatalf("a valid pod: %s", res.Text)
	}
	if got := up.only(t); got.Method != "POST" || !strings.Contains(got.Body, `"web"`) {
		t.Errorf("sent %+v", got)
	}
}
