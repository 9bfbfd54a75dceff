package toolgate_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate"
)

// serversDoc names servers as documents do: with variables (a default, an
// enum), by description, and per path item and operation. Each server is
// on a recorder's port, so that every request stays on loopback.
func serversDoc(port, other string) string {
	return `openapi: 3.0.3
info: {title: Servers, version: "1"}
servers:
  - url: http://127.0.0.1:{port}/{region}/v1
    description: Production
    variables:
      port: {default: "1"}
      region: {default: us, enum: [us, eu]}
  - url: http://127.0.0.1:` + port + `/sandbox
    description: Sandbox
paths:
  /items:
    get: {operationId: listItems, responses: {"200": {description: ok}}}
  /uploads:
    servers: [{url: /upload-area}]
    post: {operationId: upload, responses: {"200": {description: ok}}}
  /files:
    get:
      operationId: getFile
      servers: [{url: "http://127.0.0.1:` + other + `/files-host"}]
      responses: {"200": {description: ok}}
`
}

func port(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// A server's variables take the configuration's values or their defaults,
// within their enum; a server is chosen by index or description; a path
// item's relative server is resolved against the upstream; an operation's
// server on another origin is called there only when upstream.origins
// lists it, and at the upstream otherwise.
func TestServersAsTheDocumentNamesThem(t *testing.T) {
	t.Parallel()
	up, other := newRecorder(t, nil), newRecorder(t, nil)
	doc := serversDoc(port(t, up.URL), port(t, other.URL))
	for _, tt := range []struct {
		cfg, tool, want string
		atOther         bool
	}{
		{"upstream:\n  variables: {port: \"" + port(t, up.URL) + "\"}\n", "listItems", "/us/v1/items", false},
		{"upstream:\n  variables: {port: \"" + port(t, up.URL) + "\", region: eu}\n", "listItems", "/eu/v1/items", false},
		{"upstream:\n  server: Sandbox\n", "listItems", "/sandbox/items", false},
		{"upstream:\n  server: \"1\"\n", "listItems", "/sandbox/items", false},
		{"upstream:\n  server: sandbox\n", "upload", "/upload-area/uploads", false},
		{"upstream:\n  server: sandbox\n", "getFile", "/files-host/files", false},
		{"upstream:\n  server: sandbox\n  origins: [\"" + other.URL + "\"]\n", "getFile", "/files-host/files", true},
	} {
		c, _ := authed(t, doc, tt.cfg, "", nil)
		before, beforeOther := len(up.requests()), len(other.requests())
		if res := anyTool(t, c, tt.tool, `{}`); res.IsError {
			t.Fatalf("%q %s: %s", tt.cfg, tt.tool, res.Text)
		}
		got := up.requests()[before:]
		if tt.atOther {
			got = other.requests()[beforeOther:]
		}
		if len(got) != 1 || got[0].Target != tt.want {
			t.Errorf("%q %s: sent %+v, want %s at the %s", tt.cfg, tt.tool, got, tt.want, map[bool]string{true: "other origin", false: "upstream"}[tt.atOther])
		}
	}
	for cfg, want := range map[string]string{
		"upstream:\n  variables: {region: mars}\n":              `variable {region} is "mars" (upstream.variables.region), which is not among its values: us, eu`,
		"upstream:\n  variables: {zone: a}\n":                   "upstream.variables.zone names a variable that no server of the document has (it has port, region)",
		"upstream:\n  server: staging\n":                        `upstream.server is "staging", which names none of the document's servers; give an index or a description: 0: http://127.0.0.1:{port}/{region}/v1 (Production); 1: `,
		"upstream:\n  server: \"7\"\n":                          `upstream.server is "7", which names none`,
		"upstream:\n  origins: [\"https://nowhere.example\"]\n": "upstream.origins lists https://nowhere.example, where the document serves no operation",
	} {
		cat, parsed := catalogAndConfig(t, doc, cfg)
		if _, err := toolgate.NewCaller(cat, "", parsed.Upstream, nil, nil, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %s", cfg, err, want)
		}
	}
}

// A relative server needs an upstream to be resolved against; credentials
// go to a server the document alone names only once the configuration
// chooses it.
func TestRelativeServersAndCredentialsNeedAPersonsChoice(t *testing.T) {
	t.Parallel()
	cat, parsed := catalogAndConfig(t, apiKeys, "upstream:\n  auth: {type: none}\n")
	_, err := toolgate.NewCaller(cat, "", parsed.Upstream, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "the document's server /v1 is relative to where the API is served: give that with --upstream URL or upstream.url") {
		t.Errorf("a relative server without an upstream: %v", err)
	}
	up := newRecorder(t, nil)
	doc := serversDoc(port(t, up.URL), port(t, up.URL))
	doc = strings.Replace(doc, "paths:", "components:\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-Key}\nsecurity: [{key: []}]\npaths:", 1)
	cfg := "upstream:\n  schemes:\n    key: {type: api_key, env: KEY}\n"
	cat, parsed = catalogAndConfig(t, doc, cfg)
	_, err = toolgate.NewCaller(cat, "", parsed.Upstream, func(string) string { return "k-1" }, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "credentials never go to a server only the document names") || !strings.Contains(err.Error(), "upstream.server: 0") {
		t.Errorf("credentials and only the document's server: %v", err)
	}
	c, _ := authed(t, doc, cfg+"  server: Sandbox\n", "", map[string]string{"KEY": "k-1"})
	callTool(t, c, "listItems", `{}`)
	if r := up.only(t); r.Target != "/sandbox/items" || r.Header.Get("X-Key") != "k-1" {
		t.Errorf("the chosen server received %s with X-Key %q", r.Target, r.Header.Get("X-Key"))
	}
}
