package toolgate

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	for text, want := range map[string][]string{
		"listCoreV1NamespacedPod":           {"list", "cor", "v1", "namespac", "pod"},
		"/repos/{owner}/{repo}/issues":      {"repo", "owner", "repo", "issu"},
		"users.lookupByEmail":               {"user", "lookup", "email"},
		"PostPaymentIntentsIntentConfirm":   {"post", "payment", "intent", "intent", "confirm"},
		"HTTPServer running the branches":   {"http", "server", "run", "branch"},
		"Create a namespace in the cluster": {"creat", "namespac", "cluster"},
	} {
		if got := terms(text); !slices.Equal(got, want) {
			t.Errorf("terms(%q) = %q, want %q", text, got, want)
		}
	}
}
