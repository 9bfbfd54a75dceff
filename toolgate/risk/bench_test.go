package risk_test

import (
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate/risk"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// BenchmarkAssessGitHub classifies every operation of GitHub's REST
// description (1,223), body signals included; BenchmarkLoadGitHub loads
// the same description, for comparison: classification must stay small
// beside loading.
func BenchmarkAssessGitHub(b *testing.B) {
	doc, err := spec.Load(testspecs.GitHub(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, op := range doc.Operations {
			risk.Assess(op, doc)
		}
	}
	b.ReportMetric(float64(len(doc.Operations)), "operations")
}

func BenchmarkLoadGitHub(b *testing.B) {
	path := testspecs.GitHub(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := spec.Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
