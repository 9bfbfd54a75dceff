package risk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/risk"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

func TestAssess(t *testing.T) {
	for _, tt := range []struct {
		name   string
		op     spec.Operation
		want   risk.Class
		reason string
	}{
		{"plain GET", spec.Operation{Method: "GET", Path: "/orders"}, risk.Read, "GET reads"},
		{"POST", spec.Operation{Method: "POST", Path: "/orders"}, risk.Write, "POST changes state"},
		{"DELETE", spec.Operation{Method: "DELETE", Path: "/orders/{id}"}, risk.Destructive, "DELETE removes"},
		{"refund verb", spec.Operation{Method: "POST", Path: "/orders/{id}/refund"}, risk.Destructive, `"refund"`},
		{"cancel in the id", spec.Operation{Method: "POST", ID: "cancelSubscription", Path: "/subs/{id}"}, risk.Destructive, `"cancel"`},
		{"verb on a GET", spec.Operation{Method: "GET", Summary: "List deleted items", Path: "/trash"}, risk.Read, "cannot destroy"},
		{"reading secrets", spec.Operation{Method: "GET", Path: "/repos/{r}/actions/secrets"}, risk.Privileged, "credentials"},
		{"members", spec.Operation{Method: "PUT", Path: "/orgs/{org}/members/{u}"}, risk.Privileged, "who may do what"},
		{"reading members", spec.Operation{Method: "GET", Path: "/orgs/{org}/members"}, risk.Read, "GET reads"},
		{"billing", spec.Operation{Method: "POST", Path: "/billing/plan"}, risk.Privileged, "billing"},
		{"admin scope", spec.Operation{Method: "GET", Path: "/stats", Security: []map[string][]string{{"oauth": {"admin:org"}}}}, risk.Privileged, "admin:org"},
		{"write scope", spec.Operation{Method: "GET", Path: "/stats", Security: []map[string][]string{{"oauth": {"stats:write"}}}}, risk.Write, "stats:write"},
		{"x-risk raises", spec.Operation{Method: "GET", Path: "/a", Extensions: map[string]json.RawMessage{"x-risk": []byte(`"destructive"`)}}, risk.Destructive, "x-risk"},
		{"x-risk cannot lower", spec.Operation{Method: "DELETE", Path: "/a", Extensions: map[string]json.RawMessage{"x-risk": []byte(`"read"`)}}, risk.Destructive, "cannot lower"},
		{"consequential", spec.Operation{Method: "GET", Path: "/a", Extensions: map[string]json.RawMessage{"x-openai-isConsequential": []byte(`true`)}}, risk.Write, "isConsequential"},
		{"no false match inside words", spec.Operation{Method: "POST", Path: "/monkeys/dropbox"}, risk.Write, "POST"},
	} {
		a := risk.Assess(&tt.op)
		if a.Class != tt.want || !strings.Contains(strings.Join(a.Reasons, "; "), tt.reason) {
			t.Errorf("%s: %s %v; want %s with a reason mentioning %q", tt.name, a.Class, a.Reasons, tt.want, tt.reason)
		}
	}
}

func TestParseRoundTrips(t *testing.T) {
	for _, c := range []risk.Class{risk.Read, risk.Write, risk.Destructive, risk.Privileged} {
		if got, err := risk.Parse(c.String()); err != nil || got != c {
			t.Errorf("Parse(%s) = %v, %v", c, got, err)
		}
	}
	if _, err := risk.Parse("harmless"); err == nil || !strings.Contains(err.Error(), "harmless") {
		t.Errorf("Parse(harmless): %v", err)
	}
}
