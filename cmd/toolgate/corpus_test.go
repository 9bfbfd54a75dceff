package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// recorder is an upstream on loopback that records every request it
// gets and answers each with 404.
type recorder struct {
	url      string
	mu       sync.Mutex
	requests []string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		http.Error(w, `{"message":"recorded"}`, http.StatusNotFound)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r.url = "http://" + ln.Addr().String()
	return r
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// corpusReport is what testdata/corpus.mjs prints.
type corpusReport struct {
	Connected bool
	// Listed counts the tools of all pages, Unique their names.
	Listed, Unique, Pages, LargestPage int
	ListError                          string
	Calls                              []struct {
		Name           string
		NeedsArguments bool
		IsError        bool
		Text           string
		ProtocolError  string
	}
}

// refusedByDesign are the corpus documents toolgate does not serve, and
// what it says when it refuses them.
var refusedByDesign = map[string]string{
	"oai-examples_v2.0_json_petstore-separate_spec_swagger.json": "leaves the document",
	"oai-examples_v2.0_yaml_petstore-separate_spec_swagger.yaml": "leaves the document",
	"oai-examples_v3.1_webhook-example.json":                     "has no paths",
	"oai-examples_v3.1_webhook-example.yaml":                     "has no paths",
}

// The TypeScript SDK's client lists the tools of every document of the
// corpus, and GitHub's, and calls a few: it must not throw, a call
// without its required arguments must send nothing, and a call that is
// valid must reach the upstream.
func TestTypeScriptClientOnEveryDocument(t *testing.T) {
	n := nodeFor(t, "18", "@modelcontextprotocol/sdk")
	docs := testspecs.CorpusDocuments(t)
	github := os.Getenv(testspecs.GitHubEnv)
	if github == "" {
		github = filepath.Join(n.modules, "@octokit", "openapi", "generated", "api.github.com.json")
	}
	switch {
	case fileExists(github):
		docs = append(docs, github)
	case testkit.Required(testkit.NPM()):
		testkit.Missing(t, testkit.NPM("@octokit/openapi"), "GitHub's description is not at "+github)
	default:
		t.Logf("GitHub's description is not at %s; .ci/run installs it", github)
	}
	for _, doc := range docs {
		name := testspecs.Name(doc)
		if doc == github {
			name = "github"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "j.db")
			if says := refusedByDesign[name]; says != "" {
				cmd := exec.Command(binary(t), "serve", doc, "--config", noCredentials, "--stdio", "--upstream", "http://127.0.0.1:1", "--db", db)
				out, _ := cmd.CombinedOutput()
				if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), says) || strings.Count(string(out), "\n") != 1 {
					t.Errorf("toolgate serve refuses this document by design, in one line that says it %s; it said (exit %d) %s", says, code, out)
				}
				return
			}
			up := newRecorder(t)
			var r corpusReport
			out := runScript(t, n, "corpus.mjs", nil, binary(t), "serve", doc, "--config", noCredentials, "--stdio", "--upstream", up.url, "--db", db)
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("the client printed %q: %v", out, err)
			}
			if !r.Connected || r.ListError != "" || r.Listed == 0 {
				t.Fatalf("connected %v, listed %d tools, error %q", r.Connected, r.Listed, r.ListError)
			}
			if want := exposedTools(t, doc); r.Listed != want || r.Unique != want || r.LargestPage > 512<<10 {
				t.Errorf("listed %d tools (%d names) in %d pages, the largest %d bytes; want each of the %d exposed once, in pages under 512 KiB",
					r.Listed, r.Unique, r.Pages, r.LargestPage, want)
			}
			valid := 0
			for _, c := range r.Calls {
				switch {
				case c.ProtocolError != "":
					t.Errorf("%s({}): the client threw %s", c.Name, c.ProtocolError)
				case c.NeedsArguments && (!c.IsError || !strings.Contains(c.Text, "Nothing was sent")):
					t.Errorf("%s({}) lacks required arguments, yet: error %v, %q", c.Name, c.IsError, c.Text)
				case !c.NeedsArguments:
					valid++
					if !strings.Contains(c.Text, "404") {
						t.Errorf("%s({}) should have reached the upstream, which answers 404: %q", c.Name, c.Text)
					}
				}
			}
			if got := up.got(); len(got) != valid {
				t.Errorf("the upstream got %d requests, want %d, one per valid call: %v", len(got), valid, got)
			}
			t.Logf("%d tools listed in %d pages (the largest %d bytes); %s", r.Listed, r.Pages, r.LargestPage, describeCalls(r))
		})
	}
}

// exposedTools is the number of tools toolgate exposes for the document
// at path under the defaults, as inspect counts them.
func exposedTools(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command(binary(t), "inspect", path, "--json").Output()
	if err != nil {
		t.Fatalf("toolgate inspect %s: %v", path, err)
	}
	var report struct{ Summary struct{ Exposed int } }
	if err := json.Unmarshal(out, &report); err != nil || report.Summary.Exposed == 0 {
		t.Fatalf("toolgate inspect --json printed %.300q: %v", out, err)
	}
	return report.Summary.Exposed
}

func describeCalls(r corpusReport) string {
	var refused, sent int
	for _, c := range r.Calls {
		if c.NeedsArguments {
			refused++
		} else {
			sent++
		}
	}
	return fmt.Sprintf("%d calls without required arguments refused, %d valid calls sent", refused, sent)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
