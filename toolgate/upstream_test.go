package toolgate_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

const shopSpecPath = "../examples/shop/openapi.yaml"

var (
	headerAuth = config.Auth{Type: "header", Header: "X-Api-Key", Env: "SHOP_KEY"}
	bearerAuth = config.Auth{Type: "bearer", Env: "SHOP_TOKEN"}
	basicAuth  = config.Auth{Type: "basic", Env: "SHOP_LOGIN"}
)

// credential is the header value that carries secret for auth.
func credential(auth config.Auth, secret string) (string, string) {
	switch auth.Type {
	case "header":
		return auth.Header, secret
	case "bearer":
		return "Authorization", "Bearer " + secret
	}
	return "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(secret))
}

// journaled returns the one call the journal holds.
func journaled(t *testing.T, j *journal.Journal) journal.Operation {
	t.Helper()
	ops, err := j.List(context.Background(), journal.Filter{Kind: "toolgate"})
	if err != nil || len(ops) != 1 {
		t.Fatalf("journal: %d calls (%v), want 1", len(ops), err)
	}
	return ops[0]
}

// An upstream that redirects elsewhere never makes toolgate send the
// secret, or a write's body, to the other origin; a redirected write is
// not followed at all, and its answer says what it proves.
func TestRedirectsNeverTakeTheSecretElsewhere(t *testing.T) {
	t.Parallel()
	const secret = "ada:s3cr3t-Key-0f9e8d" // user:password, as basic authentication takes it
	order := `{"body":{"sku":"A1","quantity":1}}`
	for _, tt := range []struct {
		name        string
		auth        config.Auth
		tool, args  string
		status      int
		sameOrigin  bool
		state       journal.State // for writes
		text        string
		wantFollows bool
	}{
		{"header auth, write, 307", headerAuth, "createOrder", order, 307, false, journal.NotApplied, "did not apply the call", false},
		{"bearer, write, 307", bearerAuth, "createOrder", order, 307, false, journal.NotApplied, "did not apply the call", false},
		{"basic, write, 308", basicAuth, "createOrder", order, 308, false, journal.NotApplied, "did not apply the call", false},
		{"bearer, write, 302", bearerAuth, "createOrder", order, 302, false, journal.Ambiguous, "OUTCOME UNKNOWN", false},
		{"header auth, write, 301", headerAuth, "createOrder", order, 301, false, journal.Ambiguous, "OUTCOME UNKNOWN", false},
		{"header auth, write, 303", headerAuth, "createOrder", order, 303, false, journal.Applied, "applied the call", false},
		{"bearer, write, 307 within the origin", bearerAuth, "createOrder", order, 307, true, journal.NotApplied, "did not apply the call", false},
		{"bearer, read, 307", bearerAuth, "listOrders", `{}`, 307, false, "", "Nothing was read", false},
		{"header auth, read, 302", headerAuth, "getOrder", `{"id":"o-1"}`, 302, false, "", "Nothing was read", false},
		{"basic, read, 301 within the origin", basicAuth, "getOrder", `{"id":"o-1"}`, 301, true, "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			other := newRecorder(t, nil)
			var up *recorder
			up = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/moved/orders/o-1" {
					io.WriteString(w, `{"id":"o-1"}`)
					return
				}
				target := other.URL
				if tt.sameOrigin {
					target = up.URL
				}
				w.Header().Set("Location", target+"/moved"+r.URL.Path)
				w.WriteHeader(tt.status)
			})
			c, j := caller(t, shop(t, ""), up.URL, tt.auth, secret)
			res := callTool(t, c, tt.tool, tt.args)

			if reqs := other.requests(); len(reqs) != 0 {
				t.Fatalf("the other origin received %d requests: %+v", len(reqs), reqs)
			}
			reqs := up.requests()
			if want := map[bool]int{false: 1, true: 2}[tt.wantFollows]; len(reqs) != want {
				t.Fatalf("the upstream received %d requests, want %d: %+v", len(reqs), want, reqs)
			}
			name, value := credential(tt.auth, secret)
			for _, r := range reqs {
				if r.Header.Get(name) != value {
					t.Errorf("%s %s carried %s %q, want the credentials", r.Method, r.Target, name, r.Header.Get(name))
				}
			}
			if tt.wantFollows {
				if res.IsError || !strings.Contains(res.Text, "o-1") {
					t.Errorf("a read redirected within the origin: %s", res.Text)
				}
				return
			}
			if !strings.Contains(res.Text, tt.text) || res.IsError == (tt.state == journal.Applied) {
				t.Errorf("result %+v; want one that says %q", res, tt.text)
			}
			if strings.Contains(res.Text, secret) {
				t.Errorf("the result holds the secret: %s", res.Text)
			}
			if tt.state == "" {
				return
			}
			op := journaled(t, j)
			if op.State != tt.state || fmt.Sprint(op.Evidence["status"]) != fmt.Sprint(tt.status) || !strings.Contains(fmt.Sprint(op.Evidence["location"]), "/moved/orders") {
				t.Errorf("journal: %s, evidence %v; want %s with the status and where it pointed", op.State, op.Evidence, tt.state)
			}
		})
	}
}

// An upstream that echoes the request's headers, or the secret in any
// common encoding, has it redacted from the result, text and structured
// content, and from the journal.
func TestAnswersThatEchoTheSecretAreRedacted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		auth   config.Auth
		secret string
		forms  []string // what must not be seen
	}{
		{bearerAuth, "tok_3f9a8b7c6d5e4f", nil},
		{headerAuth, "k/ey+with=chars", []string{"k%2Fey%2Bwith%3Dchars"}},
		{basicAuth, "ada:pa55-w0rd!", []string{"pa55-w0rd!", base64.StdEncoding.EncodeToString([]byte("ada:pa55-w0rd!"))}},
	} {
		t.Run(tt.auth.Type, func(t *testing.T) {
			forms := append([]string{tt.secret, base64.StdEncoding.EncodeToString([]byte(tt.secret))}, tt.forms...)
			echo := func(w http.ResponseWriter, r *http.Request) {
				headers := map[string]string{}
				for k := range r.Header {
					headers[k] = r.Header.Get(k)
				}
				_, value := credential(tt.auth, tt.secret)
				if r.Method == "POST" {
					w.Header().Set("Location", "http://127.0.0.1:1/keys/"+tt.secret)
					w.WriteHeader(http.StatusTemporaryRedirect)
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				json.NewEncoder(w).Encode(map[string]any{"orders": []any{}, "headers": headers,
					"echo": fmt.Sprintf("%s %s", value, forms), tt.secret: "as a key"})
			}
			up := newRecorder(t, echo)
			c, j := caller(t, shop(t, ""), up.URL, tt.auth, tt.secret)

			res := callTool(t, c, "listOrders", `{}`)
			structured, _ := json.Marshal(res.Structured)
			if res.IsError || res.Structured == nil || !strings.Contains(res.Text, "[redacted]") {
				t.Fatalf("listOrders: %+v", res)
			}
			res2 := callTool(t, c, "createOrder", `{"body":{"sku":"`+tt.secret+`","quantity":1}}`)
			op := journaled(t, j)
			evidence, _ := json.Marshal(op.Evidence)
			history, _ := j.History(context.Background(), op.Key)
			audit, _ := json.Marshal(history)
			for _, f := range forms {
				for what, s := range map[string]string{"text": res.Text, "structured content": string(structured), "the write's result": res2.Text,
					"the journal's evidence": string(evidence), "the journal's last error": op.LastError, "the audit log": string(audit)} {
					if strings.Contains(s, f) {
						t.Errorf("%s holds %q: %s", what, f, s)
					}
				}
			}
		})
	}
}

// The answer is cut at 100 KiB; a secret across the cut is not left in
// part.
func TestASecretAcrossTheCutIsRedactedWhole(t *testing.T) {
	t.Parallel()
	const secret = "Zq9-SECRET-tail-77"
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("a", 100<<10-5)+secret+" and more")
	})
	c, _ := caller(t, shop(t, ""), up.URL, bearerAuth, secret)
	res := callTool(t, c, "listOrders", `{}`)
	if !strings.Contains(res.Text, "[answer cut at 100 KiB]") || strings.Contains(res.Text, secret[:5]) || !strings.Contains(res.Text, "[redacted]") {
		t.Errorf("the cut answer ends %q", res.Text[len(res.Text)-60:])
	}
}
