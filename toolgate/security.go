package toolgate

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// Security is what a tool's operation requires to authenticate, as its
// document declares it, and what the configuration gives for it.
type Security struct {
	// Required is false when the operation needs no credential: it
	// declares no requirement, or allows calls without one.
	Required bool
	// Requires says in words what the document requires, the
	// alternatives joined by " or ": "apikey (an API key in the query
	// parameter server_token)"; "nothing" when nothing is.
	Requires string
	// Uses are the schemes a call authenticates with, one alternative of
	// the requirements that the configuration meets entirely.
	Uses []SchemeUse
	// Missing names the schemes the configuration gives nothing for,
	// when it meets no alternative of a requirement, and Fix what to
	// write for each in the configuration's upstream section.
	Missing, Fix []string
}

// SchemeUse is one scheme a call authenticates with: the scopes its
// requirement names, and the configuration that gives its credential.
type SchemeUse struct {
	Scheme string
	Scopes []string
	Auth   config.Auth
	// Setting is where the configuration gives it: upstream.schemes.NAME
	// or upstream.auth.
	Setting string

	scheme *spec.SecurityScheme
}

// String says how the call authenticates with the scheme: "apikey:
// api_key from $UBER_KEY (upstream.schemes.apikey)".
func (u SchemeUse) String() string {
	var how string
	switch u.Auth.Type {
	case config.AuthNone:
		how = "nothing sent, as configured"
	case config.AuthForward:
		how = "the MCP client's bearer token"
	case config.AuthOAuth2:
		how = "oauth2 client credentials of " + u.Auth.ClientID + " (secret from " + u.Auth.Secret() + ")"
	default:
		how = u.Auth.Type + " from " + u.Auth.Secret()
	}
	return fmt.Sprintf("%s: %s (%s)", u.Scheme, how, u.Setting)
}

// Configured says in a few words what a call authenticates with:
// "none needed", "MISSING: apikey", or the schemes and their sources.
func (s Security) Configured() string {
	switch {
	case len(s.Missing) > 0:
		return "MISSING: " + strings.Join(s.Missing, ", ")
	case len(s.Uses) == 0 && !s.Required:
		return "none needed"
	}
	parts := make([]string, len(s.Uses))
	for i, u := range s.Uses {
		parts[i] = u.Scheme
		if u.Auth.Type == config.AuthNone {
			parts[i] += " (none sent)"
		}
	}
	return strings.Join(parts, ", ")
}

// checkSchemes checks upstream.schemes against the document: each name
// must be one of its schemes, and each credential of a kind that scheme
// takes.
func checkSchemes(doc *spec.Document, up config.Upstream) error {
	for _, name := range slices.Sorted(maps.Keys(up.Schemes)) {
		a := up.Schemes[name]
		s := doc.SecuritySchemes[name]
		if s == nil {
			declared := "declares none"
			if len(doc.SecuritySchemes) > 0 {
				declared = "declares " + strings.Join(slices.Sorted(maps.Keys(doc.SecuritySchemes)), ", ")
			}
			return fmt.Errorf("the configuration gives upstream.schemes.%s, a scheme the document does not declare (it %s)", name, declared)
		}
		if why := unfit(a, s); why != "" {
			return fmt.Errorf("upstream.schemes.%s is type %s, but the document's %s is %s: %s", name, a.Type, name, s, why)
		}
	}
	return nil
}

// unfit says why credential a cannot serve scheme s, or "" if it can.
func unfit(a config.Auth, s *spec.SecurityScheme) string {
	switch a.Type {
	case config.AuthNone:
		return ""
	case config.AuthBearer, config.AuthForward:
		if s.Bearer() {
			return ""
		}
	case config.AuthBasic:
		if s.Type == spec.TypeHTTP && s.Scheme == "basic" {
			return ""
		}
	case config.AuthHeader:
		if s.Type == spec.TypeAPIKey && s.In == "header" && strings.EqualFold(s.Param, a.Header) {
			return ""
		}
	case config.AuthAPIKey:
		if s.Type == spec.TypeAPIKey {
			return ""
		}
	case config.AuthOAuth2:
		switch {
		case s.Type != spec.TypeOAuth2:
		case s.TokenURL == "" && a.TokenURL == "":
			return fmt.Sprintf("it offers no client credentials flow, and toolgate gets tokens only by that flow, which needs no person; "+
				"give token_url, the client credentials endpoint, or use type %s with a token obtained for it", config.AuthBearer)
		default:
			return ""
		}
	}
	return "give " + fix(s.Name, s)
}

// fix is the configuration to write for scheme s, named name.
func fix(name string, s *spec.SecurityScheme) string {
	env := envName(name)
	var kind string
	switch {
	case s == nil:
		return "{type: none}, or correct the document, which does not declare it"
	case s.Type == spec.TypeAPIKey:
		kind = fmt.Sprintf("{type: %s, env: %s_KEY}", config.AuthAPIKey, env)
	case s.Type == spec.TypeHTTP && s.Scheme == "basic":
		kind = fmt.Sprintf("{type: %s, env: %s_LOGIN}  # user:password", config.AuthBasic, env)
	case s.Type == spec.TypeOAuth2 && s.TokenURL != "":
		kind = fmt.Sprintf("{type: %s, client_id: CLIENT_ID, env: %s_CLIENT_SECRET}", config.AuthOAuth2, env)
	case s.Bearer():
		kind = fmt.Sprintf("{type: %s, env: %s_TOKEN}", config.AuthBearer, env)
	default:
		return fmt.Sprintf("{type: none}: toolgate cannot authenticate with %s", s)
	}
	return kind
}

var notEnvChar = regexp.MustCompile(`[^A-Z0-9]+`)

// envName suggests an environment variable's name for a scheme's secret.
func envName(scheme string) string {
	var b strings.Builder
	for i, r := range scheme {
		if i > 0 && r >= 'A' && r <= 'Z' && scheme[i-1] >= 'a' && scheme[i-1] <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	n := strings.Trim(notEnvChar.ReplaceAllString(strings.ToUpper(b.String()), "_"), "_")
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "API_" + n
	}
	return n
}

// security decides what a call of op authenticates with under up: the
// first alternative of its requirements that the configuration meets in
// full, by a scheme's own credential or by upstream.auth where it fits.
func security(op *spec.Operation, doc *spec.Document, up config.Upstream) Security {
	s := Security{Requires: requires(op, doc)}
	if len(op.Security) == 0 {
		return s
	}
	s.Required = true
	var missing []string
	for _, alt := range op.Security {
		if len(alt) == 0 {
			s.Required = false // calls without credentials are allowed too
			continue
		}
		uses, lack := cover(alt, doc, up)
		if len(lack) == 0 {
			s.Uses = uses
			return s
		}
		if missing == nil {
			missing = lack
		}
	}
	if s.Required {
		s.Missing = missing
		for _, name := range missing {
			s.Fix = append(s.Fix, "schemes."+name+": "+fix(name, doc.SecuritySchemes[name]))
		}
	}
	return s
}

// cover returns the uses that meet the requirement alt, and the schemes
// of it that nothing meets.
func cover(alt map[string][]string, doc *spec.Document, up config.Upstream) (uses []SchemeUse, missing []string) {
	for _, name := range slices.Sorted(maps.Keys(alt)) {
		s := doc.SecuritySchemes[name]
		u := SchemeUse{Scheme: name, Scopes: alt[name], scheme: s}
		switch a, ok := up.Schemes[name]; {
		case s == nil:
			missing = append(missing, name)
			continue
		case ok:
			u.Auth, u.Setting = a, "upstream.schemes."+name
		case up.Auth.Type == config.AuthNone && up.Auth.Line > 0:
			// upstream.auth: {type: none}, written: nothing is needed anywhere.
			u.Auth, u.Setting = up.Auth, "upstream.auth"
		case up.Auth.Type != config.AuthNone && up.Auth.Type != "" && unfit(up.Auth, s) == "":
			u.Auth, u.Setting = up.Auth, "upstream.auth"
		default:
			missing = append(missing, name)
			continue
		}
		uses = append(uses, u)
	}
	return uses, missing
}

// requires says what op's requirements are, in words.
func requires(op *spec.Operation, doc *spec.Document) string {
	if len(op.Security) == 0 {
		return "nothing"
	}
	var alts []string
	for _, alt := range op.Security {
		if len(alt) == 0 {
			alts = append(alts, "nothing")
			continue
		}
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(alt)) {
			what := "not declared by the document"
			if s := doc.SecuritySchemes[name]; s != nil {
				what = s.String()
			}
			if scopes := alt[name]; len(scopes) > 0 {
				what += "; scopes " + strings.Join(scopes, " ")
			}
			parts = append(parts, name+" ("+what+")")
		}
		alts = append(alts, strings.Join(parts, " and "))
	}
	return strings.Join(alts, " or ")
}

// MissingCredentials returns an error that names the schemes that exposed
// tools require and the configuration gives nothing for, with the tools
// that require each and what to write; nil when there are none. A server
// must not start with such tools: their every call would be refused.
func (c *Catalog) MissingCredentials() error {
	tools := map[string][]string{}
	fixes := map[string]string{}
	for _, t := range c.Exposed() {
		for i, name := range t.Auth.Missing {
			tools[name] = append(tools[name], t.Name)
			fixes[name] = t.Auth.Fix[i]
		}
	}
	if len(tools) == 0 {
		return nil
	}
	var b strings.Builder
	names := slices.Sorted(maps.Keys(tools))
	fmt.Fprintf(&b, "the document requires credentials that the configuration does not give: ")
	for i, name := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		what := "which it does not declare"
		if s := c.Doc.SecuritySchemes[name]; s != nil {
			what = s.String()
		}
		list := tools[name]
		sort.Strings(list)
		shown := strings.Join(list[:min(len(list), 3)], ", ")
		if len(list) > 3 {
			shown += fmt.Sprintf(" and %d more", len(list)-3)
		}
		fmt.Fprintf(&b, "%s (%s), for %s (%s)", name, what, plural(len(list), "exposed tool"), shown)
	}
	b.WriteString("; write in the configuration, and set the variable it names:\n  upstream:\n    schemes:")
	for _, name := range names {
		fmt.Fprintf(&b, "\n      %s", strings.TrimPrefix(fixes[name], "schemes."))
	}
	b.WriteString("\nor hide those tools (tools.NAME.expose: false)")
	return errors.New(b.String())
}
