package toolgate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// openai is OpenAI's published description (testdata/openai/README.md),
// with its bearer key configured.
const openaiDoc = "testdata/openai/openapi.yaml"

const openaiConfig = "upstream:\n  schemes:\n    ApiKeyAuth: {type: bearer, env: OPENAI_API_KEY}\n    AdminApiKeyAuth: {type: bearer, env: OPENAI_ADMIN_KEY}\n"

var openaiEnv = map[string]string{"OPENAI_API_KEY": "sk-test-1", "OPENAI_ADMIN_KEY": "sk-admin-1"}

// OpenAI's document writes a query in some of its paths
// ("/responses?beta=true"): it is the request's query, not part of its
// path.
func TestLiteralQueriesInPathKeysAreQueries(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	c, _ := authed(t, openaiDoc, openaiConfig, up.URL, openaiEnv)
	for _, tt := range []struct{ tool, args, target string }{
		{"beta_createResponse", `{"body":{"model":"gpt-4o","input":"hi"}}`, "/responses?beta=true"},
		{"beta_getResponse", `{"response_id":"resp_1","stream":false}`, "/responses/resp_1?beta=true&stream=false"},
		{"beta_cancelResponse", `{"response_id":"resp_1"}`, "/responses/resp_1/cancel?beta=true"},
	} {
		before := len(up.requests())
		if res := anyTool(t, c, tt.tool, tt.args); res.IsError {
			t.Fatalf("%s: %s", tt.tool, res.Text)
		}
		if got := up.requests()[before]; got.Target != tt.target || got.Header.Get("Authorization") != "Bearer sk-test-1" {
			t.Errorf("%s sent %s (Authorization %q), want %s", tt.tool, got.Target, got.Header.Get("Authorization"), tt.target)
		}
	}
}

// Accept names the media types the operation answers in: an image, a
// JWK set, an SDP answer, audio; JSON where the document offers it.
func TestAcceptIsWhatTheOperationAnswers(t *testing.T) {
	t.Parallel()
	up := newRecorder(t, nil)
	for _, tt := range []struct{ doc, cfg, tool, args, accept string }{
		{testspecs.Corpus(t, "museum-3.1.yaml"), "upstream:\n  auth: {type: none}\n", "getTicketCode", `{"ticketId":"a54a57ca-36f8-421b-a6b4-2e8f26858a4c"}`,
			"image/png, application/problem+json;q=0.5"},
		{testspecs.Corpus(t, "museum-3.1.yaml"), "upstream:\n  auth: {type: none}\n", "getMuseumHours", `{}`, "application/json"},
		{testspecs.Corpus(t, "k8s-swagger.json"), "", "getServiceAccountIssuerOpenIDKeyset", `{}`, "application/jwk-set+json"},
		{openaiDoc, openaiConfig, "create-realtime-call", `{"body":{"sdp":"v=0"}}`, "application/sdp"},
		{openaiDoc, openaiConfig, "createSpeech", `{"body":{"model":"tts-1","input":"hi","voice":"alloy"}}`, "application/octet-stream, text/event-stream, application/json;q=0.5"},
	} {
		c, _ := authed(t, tt.doc, tt.cfg, up.URL, openaiEnv)
		before := len(up.requests())
		if res := anyTool(t, c, tt.tool, tt.args); res.IsError {
			t.Fatalf("%s: %s", tt.tool, res.Text)
		}
		if got := up.requests()[before].Header.Get("Accept"); got != tt.accept {
			t.Errorf("%s sent Accept %q, want %q", tt.tool, got, tt.accept)
		}
	}
}

// Twilio's campaign registration requires MessageSamples: given empty,
// the list is sent empty rather than left out; an optional empty list is
// still left out.
func TestRequiredEmptyListsAreSent(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "twilio-messaging-v1.yaml"), "upstream:\n  auth: {type: none}\n")
	got := sent(t, cat, "CreateUsAppToPerson", `{"MessagingServiceSid":"MGaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","body":{
		"BrandRegistrationSid":"BNaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","Description":"d","MessageFlow":"f","MessageSamples":[],
		"UsAppToPersonUsecase":"MARKETING","HasEmbeddedLinks":false,"HasEmbeddedPhone":false,"HelpKeywords":[]}}`)
	want := "BrandRegistrationSid=BNaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa&Description=d&HasEmbeddedLinks=false&HasEmbeddedPhone=false&MessageFlow=f&MessageSamples=&UsAppToPersonUsecase=MARKETING"
	if got.Body != want {
		t.Errorf("sent %s\nwant %s", got.Body, want)
	}
}

// Kubernetes' PATCH takes four kinds of patch, each its own media type:
// the agent chooses, a list goes as a JSON Patch, and a body that does
// not fit the kind chosen is refused before anything is sent.
func TestPatchBodiesInEachMediaTypeOffered(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "k8s-swagger.json"), "")
	tool := "patchCoreV1NamespacedConfigMap"
	schema, err := cat.InputSchema(cat.Lookup(tool))
	if err != nil || !strings.Contains(string(schema), `"body_content_type":{"description":"The media type body is sent in (default: application/merge-patch+json; a list is sent as application/json-patch+json).","enum":["application/merge-patch+json","application/strategic-merge-patch+json","application/json-patch+json","application/apply-patch+yaml"]`) {
		t.Fatalf("the input schema: %s (%v)", schema, err)
	}
	target := "/api/v1/namespaces/ns/configmaps/cm"
	for _, tt := range []struct{ args, contentType, body string }{
		{`{"namespace":"ns","name":"cm","body":{"data":{"k":"v"}}}`, "application/merge-patch+json", `{"data":{"k":"v"}}`},
		{`{"namespace":"ns","name":"cm","body":[{"op":"replace","path":"/data/k","value":"v"}]}`, "application/json-patch+json", `[{"op":"replace","path":"/data/k","value":"v"}]`},
		{`{"namespace":"ns","name":"cm","body":{"data":{"k":"v"}},"body_content_type":"application/strategic-merge-patch+json"}`,
			"application/strategic-merge-patch+json", `{"data":{"k":"v"}}`},
		{`{"namespace":"ns","name":"cm","fieldManager":"agent","body":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}},"body_content_type":"application/apply-patch+yaml"}`,
			"application/apply-patch+yaml", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`},
	} {
		got := sent(t, cat, tool, tt.args)
		if !strings.HasPrefix(got.Target, target) || got.Header.Get("Content-Type") != tt.contentType || got.Body != tt.body {
			t.Errorf("%s: sent %s %s %s\nwant %s %s", tt.args, got.Target, got.Header.Get("Content-Type"), got.Body, tt.contentType, tt.body)
		}
	}
	for args, want := range map[string]string{
		`{"namespace":"ns","name":"cm","body":[{"op":"remove","path":"/data/k"}],"body_content_type":"application/merge-patch+json"}`: `the argument "body" is a list, which application/merge-patch+json is not`,
		`{"namespace":"ns","name":"cm","body":{"data":{}},"body_content_type":"application/json-patch+json"}`:                         `the argument "body" is not a list, and a JSON Patch (application/json-patch+json) is a list of operations`,
		`{"namespace":"ns","name":"cm","body":[{"op":"jump","path":"/data"}]}`:                                                        `body[0].op is "jump"; it must be one of "add", "remove", "replace", "move", "copy" or "test"`,
	} {
		if text := refused(t, cat, tool, args); !strings.Contains(text, want) {
			t.Errorf("%s: %s\nwant %s", args, text, want)
		}
	}
}

// Answers that are not text reach the agent as MCP content of their
// media type: an image as an image, audio as audio, anything else as an
// embedded resource; text stays text, and what is too large, or holds the
// secret, is described and not passed on.
func TestAnswersOfEveryMediaType(t *testing.T) {
	t.Parallel()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2}, 10)...)
	answers := map[string]struct {
		contentType string
		body        []byte
	}{
		"/image": {"image/png", png}, "/audio": {"audio/mpeg", []byte("ID3\x03\x00\x00\x00\x00\x00\x00")},
		"/pdf": {"application/pdf", []byte("%PDF-1.4\n\x00\x01")}, "/sdp": {"application/sdp", []byte("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n")},
		"/big": {"application/octet-stream", bytes.Repeat([]byte{0xff}, 1<<20+1)}, "/untyped": {"", []byte{0, 0xfe, 0xff, 3}},
		"/leak": {"application/octet-stream", []byte("\x00\x01key=k-secret-7\x00")},
	}
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		a := answers[r.URL.Path]
		if a.contentType != "" {
			w.Header().Set("Content-Type", a.contentType)
		} else {
			w.Header()["Content-Type"] = nil // no type at all
		}
		w.Write(a.body)
	})
	var paths strings.Builder
	for p := range answers {
		paths.WriteString("  " + p + ":\n    get: {operationId: get_" + p[1:] + ", responses: {\"200\": {description: ok}}}\n")
	}
	doc := "openapi: 3.0.3\ninfo: {title: Media, version: \"1\"}\ncomponents:\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-Key}\nsecurity: [{key: []}]\npaths:\n" + paths.String()
	c, _ := authed(t, doc, "upstream:\n  schemes:\n    key: {type: api_key, env: KEY}\n", up.URL, map[string]string{"KEY": "k-secret-7"})
	srv := newServer(t, "tools", c.cat, c.Caller)
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
	get := func(name string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res
	}
	if res := get("get_image"); len(res.Content) != 2 || !isImage(res.Content[1], "image/png", png) || !strings.Contains(text(res), "image/png of 38 bytes") {
		t.Errorf("an image: %s", describeContent(res))
	}
	if res := get("get_audio"); len(res.Content) != 2 || !isAudio(res.Content[1], "audio/mpeg", 10) {
		t.Errorf("audio: %s", describeContent(res))
	}
	for name, want := range map[string]string{"get_pdf": "application/pdf", "get_untyped": "application/octet-stream"} {
		res := get(name)
		r, ok := res.Content[len(res.Content)-1].(*mcp.EmbeddedResource)
		if len(res.Content) != 2 || !ok || r.Resource.MIMEType != want || r.Resource.URI != up.URL+"/"+strings.TrimPrefix(name, "get_") ||
			!bytes.Equal(r.Resource.Blob, answers["/"+strings.TrimPrefix(name, "get_")].body) {
			t.Errorf("%s: %s", name, describeContent(res))
		}
	}
	if res := get("get_sdp"); len(res.Content) != 1 || !strings.HasPrefix(text(res), "v=0\r\no=- 1 1") {
		t.Errorf("an SDP answer, text: %s", describeContent(res))
	}
	if res := get("get_big"); len(res.Content) != 1 || !strings.Contains(text(res), "application/octet-stream of more than 1048576 bytes, more than the 1048576 bytes toolgate passes on") {
		t.Errorf("an answer too large: %s", describeContent(res))
	}
	if res := get("get_leak"); len(res.Content) != 1 || !strings.Contains(text(res), "holds the upstream's credentials, so it is not passed on") {
		t.Errorf("an answer that holds the secret: %s", describeContent(res))
	}
}

func isImage(c mcp.Content, mime string, data []byte) bool {
	i, ok := c.(*mcp.ImageContent)
	return ok && i.MIMEType == mime && bytes.Equal(i.Data, data)
}

func isAudio(c mcp.Content, mime string, n int) bool {
	a, ok := c.(*mcp.AudioContent)
	return ok && a.MIMEType == mime && len(a.Data) == n
}

// describeContent shows a result's content for a failure message.
func describeContent(res *mcp.CallToolResult) string {
	out, _ := json.Marshal(res.Content)
	if len(out) > 600 {
		out = append(out[:600], "..."...)
	}
	return string(out)
}
