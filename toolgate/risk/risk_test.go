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
		{"refund action", spec.Operation{Method: "POST", Path: "/orders/{id}/refund"}, risk.Destructive, `moves money ("refund"`},
		{"cancel in the id", spec.Operation{Method: "POST", ID: "cancelSubscription", Path: "/subs/{id}"}, risk.Destructive, `"cancel"`},
		{"an adjective on a GET", spec.Operation{Method: "GET", Summary: "List deleted items", Path: "/trash"}, risk.Read, "GET reads"},
		{"reading secrets", spec.Operation{Method: "GET", Path: "/repos/{r}/actions/secrets"}, risk.Privileged, "reads credentials"},
		{"members", spec.Operation{Method: "PUT", Path: "/orgs/{org}/members/{u}"}, risk.Privileged, "who may do what"},
		{"reading members", spec.Operation{Method: "GET", Path: "/orgs/{org}/members"}, risk.Read, "GET reads"},
		{"billing", spec.Operation{Method: "POST", Path: "/billing/plan"}, risk.Privileged, "billing"},
		{"admin scope to change", spec.Operation{Method: "POST", Path: "/stats", Security: []map[string][]string{{"oauth": {"admin:org"}}}}, risk.Privileged, "admin:org"},
		{"admin scope to read", spec.Operation{Method: "GET", Path: "/stats", Security: []map[string][]string{{"oauth": {"admin:org"}}}}, risk.Read, "to read, that alone does not make it privileged"},
		{"write scope", spec.Operation{Method: "GET", Path: "/stats", Security: []map[string][]string{{"oauth": {"stats:write"}}}}, risk.Write, "stats:write"},
		{"x-risk raises", spec.Operation{Method: "GET", Path: "/a", Extensions: map[string]json.RawMessage{"x-risk": []byte(`"destructive"`)}}, risk.Destructive, "x-risk"},
		{"x-risk cannot lower", spec.Operation{Method: "DELETE", Path: "/a", Extensions: map[string]json.RawMessage{"x-risk": []byte(`"read"`)}}, risk.Destructive, "cannot lower"},
		{"consequential", spec.Operation{Method: "GET", Path: "/a", Extensions: map[string]json.RawMessage{"x-openai-isConsequential": []byte(`true`)}}, risk.Write, "isConsequential"},
		{"no false match inside words", spec.Operation{Method: "POST", Path: "/monkeys/dropbox"}, risk.Write, "POST"},

		// Kubernetes: access nouns inside compound words, connections
		// into running systems whatever the method.
		{"a cluster role binding, by its path", spec.Operation{Method: "POST", Path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"}, risk.Privileged, `"clusterrolebindings" in the path`},
		{"a role binding, by its id", spec.Operation{Method: "PATCH", ID: "patchRbacAuthorizationV1NamespacedRoleBinding", Path: "/x/{name}"}, risk.Privileged, `"role" in its name`},
		{"exec over GET", spec.Operation{Method: "GET", ID: "connectCoreV1GetNamespacedPodExec", Path: "/api/v1/namespaces/{namespace}/pods/{name}/exec"}, risk.Privileged, `("exec")`},
		{"attach to a pod", spec.Operation{Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}/attach"}, risk.Privileged, "opens a connection"},
		{"attach a payment method", spec.Operation{Method: "POST", Path: "/v1/payment_methods/{pm}/attach"}, risk.Write, "POST changes state"},
		{"proxy over HEAD", spec.Operation{Method: "HEAD", Path: "/api/v1/nodes/{name}/proxy/{path}"}, risk.Privileged, `("proxy")`},
		{"port forwarding", spec.Operation{Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}/portforward"}, risk.Privileged, "portforward"},
		{"admission webhook", spec.Operation{Method: "PUT", Path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{name}"}, risk.Privileged, "where events and data are sent"},
		{"certificate approval", spec.Operation{Method: "PUT", Path: "/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval"}, risk.Privileged, `approves or grants something on someone's behalf ("approval"`},
		{"eviction", spec.Operation{Method: "POST", Path: "/api/v1/namespaces/{namespace}/pods/{name}/eviction"}, risk.Destructive, `"eviction"`},
		{"reading ephemeral containers", spec.Operation{Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers"}, risk.Read, "GET reads"},
		{"adding an ephemeral container", spec.Operation{Method: "PATCH", Path: "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers"}, risk.Privileged, "ephemeralcontainers"},

		// GitHub.
		{"merging", spec.Operation{Method: "PUT", ID: "pulls/merge", Summary: "Merge a pull request", Path: "/repos/{owner}/{repo}/pulls/{pull_number}/merge"}, risk.Destructive, `cannot be taken back ("merge"`},
		{"a merge commit", spec.Operation{Method: "POST", ID: "repos/merge", Summary: "Merge a branch", Path: "/repos/{owner}/{repo}/merges"}, risk.Destructive, `"merge"`},
		{"checking a merge", spec.Operation{Method: "GET", ID: "pulls/check-if-merged", Summary: "Check if a pull request has been merged", Path: "/repos/{owner}/{repo}/pulls/{pull_number}/merge"}, risk.Read, "GET reads"},
		{"transfer of ownership", spec.Operation{Method: "POST", ID: "repos/transfer", Summary: "Transfer a repository", Path: "/repos/{owner}/{repo}/transfer"}, risk.Destructive, `"transfer"`},
		{"branch protection", spec.Operation{Method: "PUT", ID: "repos/update-branch-protection", Summary: "Update branch protection", Path: "/repos/{owner}/{repo}/branches/{branch}/protection"}, risk.Privileged, `"protection" in the path`},
		{"a webhook", spec.Operation{Method: "POST", ID: "repos/create-webhook", Summary: "Create a repository webhook", Path: "/repos/{owner}/{repo}/hooks"}, risk.Privileged, `"hooks" in the path`},
		{"the organization itself", spec.Operation{Method: "PATCH", ID: "orgs/update", Summary: "Update an organization", Path: "/orgs/{org}"}, risk.Privileged, "organization itself"},
		{"a repository in the organization", spec.Operation{Method: "POST", ID: "repos/create-in-org", Summary: "Create an organization repository", Path: "/orgs/{org}/repos"}, risk.Write, "POST changes state"},
		{"public SSH keys of a user", spec.Operation{Method: "GET", ID: "users/list-public-keys-for-user", Summary: "List public keys for a user", Path: "/users/{username}/keys"}, risk.Read, "public keys, not secrets"},
		{"GPG keys of a user", spec.Operation{Method: "GET", Summary: "List GPG keys for a user", Path: "/users/{username}/gpg_keys"}, risk.Read, "public key"},
		{"adding an SSH key", spec.Operation{Method: "POST", Summary: "Create a public SSH key for the authenticated user", Path: "/user/keys"}, risk.Privileged, "let someone in"},
		{"deploy keys", spec.Operation{Method: "GET", Summary: "List deploy keys", Path: "/repos/{owner}/{repo}/keys"}, risk.Privileged, "reads credentials"},
		{"a secret's public key", spec.Operation{Method: "GET", Path: "/repos/{owner}/{repo}/actions/secrets/public-key"}, risk.Read, "public key, no secret"},
		{"only for admins", spec.Operation{Method: "POST", Summary: "Create configuration for a runner", Description: "The authenticated user must have admin access to the repository.", Path: "/repos/{o}/{r}/runners/generate-jitconfig"}, risk.Privileged, "only administrators or owners"},
		{"read only for admins", spec.Operation{Method: "GET", Summary: "List runners", Description: "The authenticated user must have admin access to the repository.", Path: "/repos/{o}/{r}/runners"}, risk.Read, "GET reads"},

		// Stripe: money moves when a payment is created, captured, paid.
		{"a charge", spec.Operation{Method: "POST", ID: "PostCharges", Path: "/v1/charges"}, risk.Destructive, "creates charges"},
		{"a charge's metadata", spec.Operation{Method: "POST", ID: "PostChargesCharge", Description: "<p>Updates the specified charge by setting the values of the parameters passed.</p>", Path: "/v1/charges/{charge}"}, risk.Write, "POST changes state"},
		{"a capture", spec.Operation{Method: "POST", ID: "PostPaymentIntentsIntentCapture", Path: "/v1/payment_intents/{intent}/capture"}, risk.Destructive, `moves money ("capture"`},
		{"a confirmation", spec.Operation{Method: "POST", ID: "PostPaymentIntentsIntentConfirm", Path: "/v1/payment_intents/{intent}/confirm"}, risk.Destructive, `"confirm", said of "payment"`},
		{"a setup confirmation", spec.Operation{Method: "POST", ID: "PostSetupIntentsIntentConfirm", Path: "/v1/setup_intents/{intent}/confirm"}, risk.Write, "POST changes state"},
		{"a payout", spec.Operation{Method: "POST", ID: "PostPayouts", Path: "/v1/payouts"}, risk.Destructive, "creates payouts"},
		{"a top-up", spec.Operation{Method: "POST", ID: "PostTopups", Path: "/v1/topups"}, risk.Destructive, "creates topups"},
		{"paying an invoice", spec.Operation{Method: "POST", ID: "PostInvoicesInvoicePay", Path: "/v1/invoices/{invoice}/pay"}, risk.Destructive, `"pay"`},
		{"reading payouts", spec.Operation{Method: "GET", ID: "GetPayouts", Path: "/v1/payouts"}, risk.Read, "GET reads"},
		{"a generated id repeats parameter names", spec.Operation{Method: "GET", ID: "GetShippingRatesShippingRateToken", Path: "/v1/shipping_rates/{shipping_rate_token}"}, risk.Read, "GET reads"},
		{"irreversible", spec.Operation{Method: "POST", Description: "Closing a dispute is irreversible.", Path: "/v1/disputes/{dispute}/settle"}, risk.Destructive, "cannot be undone"},

		// Slack: state-changing GETs; kicks and archives.
		{"a GET that revokes", spec.Operation{Method: "GET", ID: "auth_revoke", Description: "Revokes a token.", Path: "/auth.revoke"}, risk.Destructive, "GET, but its name says it does more than read"},
		{"a GET that uninstalls", spec.Operation{Method: "GET", ID: "apps_uninstall", Path: "/apps.uninstall"}, risk.Destructive, `"uninstall"`},
		{"a GET that opens", spec.Operation{Method: "GET", ID: "views_open", Description: "Open a view for a user.", Path: "/views.open"}, risk.Write, `changes state ("open"`},
		{"a GET that requests scopes", spec.Operation{Method: "GET", ID: "apps_permissions_request", Path: "/apps.permissions.request"}, risk.Privileged, "who may do what"},
		{"a GET that lists", spec.Operation{Method: "GET", ID: "pins_list", Description: "Lists items pinned to a channel.", Path: "/pins.list"}, risk.Read, "GET reads"},
		{"a kick", spec.Operation{Method: "POST", ID: "conversations_kick", Path: "/conversations.kick"}, risk.Destructive, `"kick"`},
		{"an archive", spec.Operation{Method: "POST", ID: "conversations_archive", Path: "/conversations.archive"}, risk.Destructive, `"archive"`},
		{"an unarchive", spec.Operation{Method: "POST", ID: "conversations_unarchive", Description: "Reverses conversation archival.", Path: "/conversations.unarchive"}, risk.Write, "POST changes state"},
		{"an admin's act", spec.Operation{Method: "POST", ID: "admin_emoji_add", Path: "/admin.emoji.add"}, risk.Privileged, "administrator's act"},

		// DigitalOcean: cluster credentials over GET.
		{"a kubeconfig", spec.Operation{Method: "GET", ID: "kubernetes_get_kubeconfig", Summary: "Retrieve the kubeconfig for a Kubernetes Cluster", Path: "/v2/kubernetes/clusters/{cluster_id}/kubeconfig"}, risk.Privileged, `"kubeconfig"`},
		{"cluster credentials", spec.Operation{Method: "GET", ID: "kubernetes_get_credentials", Path: "/v2/kubernetes/clusters/{cluster_id}/credentials"}, risk.Privileged, `"credentials"`},
		{"a reboot", spec.Operation{Method: "POST", ID: "droplet_reboot", Path: "/v2/droplets/{id}/reboot"}, risk.Destructive, `"reboot"`},

		// Twilio 2010: an account in every path is not what changes.
		{"a message under an account", spec.Operation{Method: "POST", ID: "CreateMessage", Path: "/2010-04-01/Accounts/{AccountSid}/Messages.json"}, risk.Write, "POST changes state"},
		{"the account itself", spec.Operation{Method: "POST", ID: "UpdateAccount", Path: "/2010-04-01/Accounts/{Sid}.json"}, risk.Privileged, "account or organization itself"},
		{"a certificate", spec.Operation{Method: "POST", ID: "UpdateDomainCertV4", Path: "/v1/LinkShortening/Domains/{DomainSid}/Certificate"}, risk.Privileged, "certificates"},

		// OpenAI: a spending limit.
		{"a spend limit", spec.Operation{Method: "POST", ID: "update-project-spend-limit", Summary: "Update the spend limit of a project", Path: "/organization/projects/{project_id}/spend_limit"}, risk.Privileged, "billing or spending"},

		// Writes that reach past one resource: how long data is kept, rate
		// limits, a whole organization's settings.
		{"data retention", spec.Operation{Method: "POST", ID: "update-organization-data-retention", Path: "/organization/data_retention"}, risk.Privileged, `how long data is kept ("retention" in the path)`},
		{"rate limits", spec.Operation{Method: "POST", ID: "update-project-rate-limits", Path: "/organization/projects/{project_id}/rate_limits/{rate_limit_id}"}, risk.Privileged, `rate limits ("rate" in the path)`},
		{"a joined rate limit", spec.Operation{Method: "PUT", Path: "/v1/ratelimits/{id}"}, risk.Privileged, `rate limits ("ratelimits" in the path)`},
		{"an organization's settings", spec.Operation{Method: "PATCH", Path: "/orgs/{org}/settings"}, risk.Privileged, `settings of a whole org ("settings" of "orgs" in the path)`},
		{"a database's settings", spec.Operation{Method: "PATCH", Path: "/v2/databases/{id}/config"}, risk.Write, "PATCH changes state"},
		{"reading the retention", spec.Operation{Method: "GET", Path: "/organization/data_retention"}, risk.Read, "GET reads"},
	} {
		a := risk.Assess(&tt.op, nil)
		if a.Class != tt.want || !strings.Contains(strings.Join(a.Reasons, "; "), tt.reason) {
			t.Errorf("%s: %s %q; want %s with a reason mentioning %q", tt.name, a.Class, a.Reasons, tt.want, tt.reason)
		}
	}
}

// TestReview checks that where the evidence disagrees, the assessment
// says so, and why.
func TestReview(t *testing.T) {
	for _, tt := range []struct {
		name   string
		op     spec.Operation
		review string // "" for none
	}{
		{"agreeing evidence", spec.Operation{Method: "DELETE", ID: "deleteOrder", Path: "/orders/{id}"}, ""},
		{"a GET named for reading and changing", spec.Operation{Method: "GET", ID: "admin_invites", Path: "/invites.list.revoke"}, ""},
		{"scope against method", spec.Operation{Method: "GET", Path: "/a", Security: []map[string][]string{{"oauth": {"a:write"}}}}, `scope "a:write" says it writes`},
		{"x-risk against the engine", spec.Operation{Method: "DELETE", Path: "/a", Extensions: map[string]json.RawMessage{"x-risk": []byte(`"read"`)}}, "the document calls it read, the engine destructive"},
		{"description against name", spec.Operation{Method: "PATCH", Summary: "Update a gist", Description: "Allows you to update, delete, or rename gist files.", Path: "/gists/{id}"}, `speaks of "delete"`},
		{"a read verb beside a state verb", spec.Operation{Method: "GET", ID: "workflows_stepCompleted", Path: "/workflows.step.list"}, ""},
	} {
		a := risk.Assess(&tt.op, nil)
		got := strings.Join(a.Review, "; ")
		if (tt.review == "") != (got == "") || !strings.Contains(got, tt.review) {
			t.Errorf("%s: review %q; want one mentioning %q", tt.name, got, tt.review)
		}
	}
}

// operation parses a one-operation document and returns it with the
// document, for signals that read the request body.
func operation(t *testing.T, doc string) (*spec.Operation, *spec.Document) {
	t.Helper()
	d, err := spec.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Operations) != 1 {
		t.Fatalf("%d operations", len(d.Operations))
	}
	return d.Operations[0], d
}

func TestAssessBody(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      risk.Class
		reason    string
		review    string
	}{
		{"an action chosen in the body", `{"openapi": "3.0.0", "paths": {"/v2/droplets/{droplet_id}/actions": {"post": {
			"operationId": "dropletActions_post", "summary": "Initiate a Droplet Action",
			"requestBody": {"$ref": "#/components/requestBodies/droplet_actions"}, "responses": {}}}},
		  "components": {
		    "requestBodies": {"droplet_actions": {"content": {"application/json": {"schema": {"anyOf": [
		      {"$ref": "#/components/schemas/droplet_action"}, {"$ref": "#/components/schemas/droplet_action_rebuild"}]}}}}},
		    "schemas": {
		      "droplet_action": {"type": "object", "properties": {"type": {"$ref": "#/components/schemas/action_type"}}},
		      "action_type": {"type": "string", "enum": ["enable_backups", "disable_backups", "reboot", "power_cycle", "shutdown", "power_off", "power_on"]},
		      "droplet_action_rebuild": {"allOf": [{"$ref": "#/components/schemas/droplet_action"}, {"properties": {"type": {"enum": ["rebuild"]}, "image": {"type": "string"}}}]}}}}`,
			risk.Destructive, "type: disable_backups, reboot, power_cycle, shutdown and 2 more", "harmless ones (enable_backups, power_on)"},
		{"a force flag", `{"openapi": "3.0.0", "paths": {"/repos/{owner}/{repo}/git/refs/{ref}": {"patch": {
			"operationId": "git/update-ref", "summary": "Update a reference",
			"requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
			  "sha": {"type": "string"}, "force": {"type": "boolean"}}}}}}, "responses": {}}}}}`,
			risk.Destructive, `force the change ("force")`, ""},
		{"a spend limit in the body", `{"openapi": "3.0.0", "paths": {"/organization/projects/{project_id}": {"post": {
			"operationId": "modify-project", "summary": "Modify a project",
			"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectUpdate"}}}}, "responses": {}}}},
		  "components": {"schemas": {"ProjectUpdate": {"type": "object", "properties": {
		    "name": {"type": "string"}, "monthly_spend_limit_usd": {"type": "number"}}}}}}`,
			risk.Privileged, "monthly_spend_limit_usd", ""},
		{"an approval in the body", `{"openapi": "3.0.0", "paths": {"/repos/{owner}/{repo}/pulls/{pull_number}/reviews": {"post": {
			"operationId": "pulls/create-review", "summary": "Create a review for a pull request",
			"requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
			  "body": {"type": "string"}, "event": {"type": "string", "enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}}}}}}, "responses": {}}}}}`,
			risk.Write, "POST changes state", "can approve (event: APPROVE)"},
		{"confirming a payment at once", `{"openapi": "3.0.0", "paths": {"/v1/payment_intents": {"post": {
			"operationId": "PostPaymentIntents",
			"requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object", "properties": {
			  "amount": {"type": "integer"}, "confirm": {"type": "boolean"}}}}}}, "responses": {}}}}}`,
			risk.Destructive, `move money at once ("confirm")`, `only its body's "confirm"`},
		{"a role in the body", `{"openapi": "3.0.0", "paths": {"/users": {"post": {
			"operationId": "createUser", "summary": "Create a user",
			"requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
			  "email": {"type": "string"}, "role": {"type": "string", "format": "uuid"}}}}}}, "responses": {}}}}}`,
			risk.Privileged, `set who may do what ("role")`, ""},
		{"a body of nouns", `{"openapi": "3.0.0", "paths": {"/v1/payment_methods": {"post": {
			"operationId": "PostPaymentMethods",
			"requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
			  "type": {"type": "string", "enum": ["card", "wechat_pay", "sepa_debit"]}}}}}}, "responses": {}}}}}`,
			risk.Write, "POST changes state", ""},
	} {
		op, doc := operation(t, tt.doc)
		a := risk.Assess(op, doc)
		reasons, review := strings.Join(a.Reasons, "; "), strings.Join(a.Review, "; ")
		if a.Class != tt.want || !strings.Contains(reasons, tt.reason) || (tt.review == "") != (review == "") || !strings.Contains(review, tt.review) {
			t.Errorf("%s: %s %q, review %q; want %s with %q, review %q", tt.name, a.Class, a.Reasons, a.Review, tt.want, tt.reason, tt.review)
		}
		if b := risk.Assess(op, nil); b.Class > a.Class {
			t.Errorf("%s: without the document the class is %s, above %s", tt.name, b.Class, a.Class)
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

// TestAssessAnswer checks the rules of what an operation returns: a read
// whose answer holds credentials is privileged, and the reason names the
// property; flags, counts, text tokens, client-side secrets and
// write-only properties are no credentials.
func TestAssessAnswer(t *testing.T) {
	read := func(schema, components string) string {
		return `{"openapi": "3.0.0", "paths": {"/things/{id}": {"get": {"operationId": "getThing",
			"responses": {"200": {"content": {"application/json": {"schema": ` + schema + `}}}}}}},
			"components": {"schemas": {` + components + `}}}`
	}
	for _, tt := range []struct {
		name, doc string
		want      risk.Class
		reason    string
	}{
		{"a database user's password, through $ref and allOf", read(`{"type": "object", "properties": {"user": {"$ref": "#/components/schemas/user"}}}`,
			`"user": {"allOf": [{"$ref": "#/components/schemas/named"}, {"properties": {"password": {"type": "string", "readOnly": true}}}]},
			 "named": {"type": "object", "properties": {"name": {"type": "string"}}}`), risk.Privileged, `its answer holds them ("user.password")`},
		{"an account's auth token in a list", read(`{"type": "object", "properties": {"accounts": {"type": "array", "items": {"$ref": "#/components/schemas/account"}}}}`,
			`"account": {"type": "object", "properties": {"sid": {"type": "string"}, "auth_token": {"type": "string", "nullable": true}}}`),
			risk.Privileged, `("accounts.auth_token")`},
		{"a connection string", read(`{"type": "object", "properties": {"connectionString": {"type": "string"}}}`, `"x": {}`), risk.Privileged, `("connectionString")`},
		{"an API key", read(`{"type": "object", "properties": {"data": {"type": "array", "items": {"type": "object", "properties": {"apiKey": {"type": "string"}}}}}}`, `"x": {}`),
			risk.Privileged, `("data.apiKey")`},
		{"a private key", read(`{"type": "object", "properties": {"private_key": {"type": "string"}}}`, `"x": {}`), risk.Privileged, `("private_key")`},
		{"a flag and a count", read(`{"type": "object", "properties": {"password_set": {"type": "boolean"}, "is_secret": {"type": "boolean"}, "secret": {"type": "boolean"},
			"usage": {"type": "object", "properties": {"prompt_tokens": {"type": "integer"}}}}}`, `"x": {}`), risk.Read, "GET reads"},
		{"a page's token", read(`{"type": "object", "properties": {"next_page_token": {"type": "string"}, "items": {"type": "array", "items": {"type": "string"}}}}`, `"x": {}`),
			risk.Read, "GET reads"},
		{"a model's tokens, deep down", read(`{"type": "object", "properties": {"choices": {"type": "array", "items": {"type": "object", "properties": {
			"logprobs": {"type": "object", "properties": {"content": {"type": "array", "items": {"type": "object", "properties": {"token": {"type": "string"}}}}}}}}}}}`, `"x": {}`),
			risk.Read, "GET reads"},
		{"a secret for the client side", read(`{"type": "object", "properties": {"client_secret": {"type": "string",
			"description": "The client secret of this PaymentIntent. Used for client-side retrieval using a publishable key."}}}`, `"x": {}`), risk.Read, "GET reads"},
		{"a write-only password", read(`{"type": "object", "properties": {"password": {"type": "string", "writeOnly": true}}}`, `"x": {}`), risk.Read, "GET reads"},
		{"a credential of an embedded object's embedded object", read(`{"type": "object", "properties": {"charge": {"type": "object", "properties": {
			"customer": {"type": "object", "properties": {"source": {"type": "object", "properties": {"secret": {"type": "string"}}}}}}}}}`, `"x": {}`),
			risk.Read, "GET reads"},
	} {
		op, doc := operation(t, tt.doc)
		a := risk.Assess(op, doc)
		if reasons := strings.Join(a.Reasons, "; "); a.Class != tt.want || !strings.Contains(reasons, tt.reason) {
			t.Errorf("%s: %s %q; want %s with %q", tt.name, a.Class, a.Reasons, tt.want, tt.reason)
		}
	}
}
