package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pb33f/libopenapi"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// githubSpec is GitHub's REST description, which .ci/run installs.
func githubSpec(b *testing.B) []byte {
	p := os.Getenv("TOOLGATE_GITHUB_SPEC")
	if p == "" {
		p = filepath.Join("..", ".cache", "npm", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		b.Skip("GitHub's description is not installed (.ci/run installs it: npm install @octokit/openapi)")
	}
	return data
}

// BenchmarkLoadGitHub loads GitHub's REST description (13 MB, 1,223
// operations) three ways: libopenapi's full model, toolgate's lean loader,
// and, as the floor, encoding/json decoding the paths into raw messages.
func BenchmarkLoadGitHub(b *testing.B) {
	data := githubSpec(b)
	b.Run("libopenapi", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			doc, err := libopenapi.NewDocument(data)
			if err != nil {
				b.Fatal(err)
			}
			m, err := doc.BuildV3Model()
			if err != nil {
				b.Fatal(err)
			}
			if m.Model.Paths.PathItems.Len() < 700 {
				b.Fatalf("%d paths", m.Model.Paths.PathItems.Len())
			}
		}
	})
	b.Run("toolgate-spec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := spec.Parse(data)
			if err != nil {
				b.Fatal(err)
			}
			if len(d.Operations) < 1000 {
				b.Fatalf("%d operations", len(d.Operations))
			}
		}
	})
	b.Run("encoding-json-paths", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v struct {
				Paths map[string]map[string]json.RawMessage `json:"paths"`
			}
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
