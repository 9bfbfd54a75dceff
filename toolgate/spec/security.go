package spec

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	json "github.com/segmentio/encoding/json"
)

// Security scheme types, as OpenAPI 3 names them. Swagger 2.0's basic is
// read as TypeHTTP with the scheme basic.
const (
	TypeAPIKey        = "apiKey"
	TypeHTTP          = "http"
	TypeOAuth2        = "oauth2"
	TypeOpenIDConnect = "openIdConnect"
	TypeMutualTLS     = "mutualTLS"
)

// FlowClientCredentials is the OAuth2 flow that a server can run alone:
// the client's own id and secret exchanged for a token, with no person in
// a browser.
const FlowClientCredentials = "clientCredentials"

// SecurityScheme is one of the document's security schemes: how the API
// wants a caller to authenticate.
type SecurityScheme struct {
	Name string
	// Type is TypeAPIKey, TypeHTTP, TypeOAuth2, TypeOpenIDConnect or
	// TypeMutualTLS, or what the document wrote when it is none of them.
	Type string
	// In and Param say where an API key goes: header, query or cookie,
	// under the name Param.
	In, Param string
	// Scheme is an http scheme's name in lower case: basic, bearer,
	// digest...
	Scheme string
	// Flows are the OAuth2 flows the scheme offers, by OpenAPI 3's names
	// (authorizationCode, clientCredentials, implicit, password), sorted.
	Flows []string
	// TokenURL is the token endpoint of the client credentials flow,
	// when the scheme offers it, as the document writes it.
	TokenURL string
	// Description is the document's.
	Description string
}

// Bearer reports whether the scheme's credential is a token sent as
// "Authorization: Bearer": an http bearer, OAuth2 or OpenID Connect scheme.
func (s *SecurityScheme) Bearer() bool {
	return s.Type == TypeHTTP && s.Scheme == "bearer" || s.Type == TypeOAuth2 || s.Type == TypeOpenIDConnect
}

// String says what the scheme is, for a person: "an API key in the query
// parameter server_token", "HTTP bearer", "OAuth2 (client credentials)".
func (s *SecurityScheme) String() string {
	switch s.Type {
	case TypeAPIKey:
		where := map[string]string{"header": "the header", "query": "the query parameter", "cookie": "the cookie"}[s.In]
		if where == "" {
			where = "the " + s.In + " parameter"
		}
		return "an API key in " + where + " " + s.Param
	case TypeHTTP:
		return "HTTP " + s.Scheme
	case TypeOAuth2:
		if len(s.Flows) == 0 {
			return "OAuth2"
		}
		flows := make([]string, len(s.Flows))
		for i, f := range s.Flows {
			flows[i] = flowWords[f]
			if flows[i] == "" {
				flows[i] = f
			}
		}
		return "OAuth2 (" + strings.Join(flows, ", ") + ")"
	case TypeOpenIDConnect:
		return "OpenID Connect"
	case TypeMutualTLS:
		return "mutual TLS"
	}
	return s.Type
}

var flowWords = map[string]string{"authorizationCode": "authorization code", FlowClientCredentials: "client credentials",
	"implicit": "implicit", "password": "password"}

// swagger2Flows are Swagger 2.0's names of the OAuth2 flows, as OpenAPI 3
// names them.
var swagger2Flows = map[string]string{"implicit": "implicit", "password": "password", "application": FlowClientCredentials,
	"accessCode": "authorizationCode"}

// rawScheme is a security scheme as OpenAPI 3 or Swagger 2.0 writes it.
type rawScheme struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Name        string `json:"name"`
	In          string `json:"in"`
	Scheme      string `json:"scheme"`
	Flows       map[string]struct {
		TokenURL string `json:"tokenUrl"`
	} `json:"flows"`
	// Swagger 2.0
	Flow     string `json:"flow"`
	TokenURL string `json:"tokenUrl"`
}

func (d *Document) securitySchemes() error {
	schemes, where := d.raw.Components.SecuritySchemes, "components.securitySchemes"
	if d.Version == "2.0" {
		schemes, where = d.raw.SecurityDefinitions, "securityDefinitions"
	}
	d.SecuritySchemes = map[string]*SecurityScheme{}
	for name, raw := range schemes {
		loc := where + "." + name
		raw, err := d.deref(raw, loc)
		if err != nil {
			return err
		}
		var r rawScheme
		if err := decode(raw, &r); err != nil {
			return fmt.Errorf("%s: %v", loc, err)
		}
		s := &SecurityScheme{Name: name, Type: r.Type, Description: r.Description, In: r.In, Param: r.Name,
			Scheme: strings.ToLower(strings.TrimSpace(r.Scheme))}
		switch {
		case r.Type == "basic" && d.Version == "2.0":
			s.Type, s.Scheme = TypeHTTP, "basic"
		case r.Type == TypeOAuth2 && d.Version == "2.0":
			if f := swagger2Flows[r.Flow]; f != "" {
				s.Flows = []string{f}
			}
			if s.Flows != nil && s.Flows[0] == FlowClientCredentials {
				s.TokenURL = r.TokenURL
			}
		case r.Type == TypeOAuth2:
			for f, flow := range r.Flows {
				s.Flows = append(s.Flows, f)
				if f == FlowClientCredentials {
					s.TokenURL = flow.TokenURL
				}
			}
			sort.Strings(s.Flows)
		}
		if s.Type == TypeAPIKey && (s.Param == "" || s.In == "") {
			return fmt.Errorf("%s: an apiKey scheme needs a name and an \"in\" (header, query or cookie)", loc)
		}
		d.SecuritySchemes[name] = s
	}
	return nil
}

// Server is a base URL the document names, with the variables its URL
// holds ({region} in https://{region}.api.example.com).
type Server struct {
	URL         string
	Description string
	Variables   map[string]ServerVariable
}

// ServerVariable is a variable of a server's URL.
type ServerVariable struct {
	Default string
	// Enum, when not empty, lists the values the variable may take.
	Enum        []string
	Description string
}

// rawServer is a server as OpenAPI 3 writes it.
type rawServer struct {
	URL         string `json:"url"`
	Description string `json:"description"`
	Variables   map[string]struct {
		Default     json.RawMessage `json:"default"`
		Enum        []any           `json:"enum"`
		Description string          `json:"description"`
	} `json:"variables"`
}

// readServers reads a servers list, OpenAPI 3's, at where.
func readServers(raw json.RawMessage, where string) ([]Server, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []rawServer
	if err := decode(raw, &list); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	var out []Server
	for i, r := range list {
		if strings.TrimSpace(r.URL) == "" {
			continue
		}
		s := Server{URL: strings.TrimSpace(r.URL), Description: r.Description}
		for name, v := range r.Variables {
			if s.Variables == nil {
				s.Variables = map[string]ServerVariable{}
			}
			sv := ServerVariable{Description: v.Description}
			var def any
			if len(v.Default) > 0 {
				if err := json.Unmarshal(v.Default, &def); err != nil {
					return nil, fmt.Errorf("%s[%d].variables.%s.default: %v", where, i, name, err)
				}
			}
			if def != nil {
				sv.Default = fmt.Sprint(def)
			}
			for _, e := range v.Enum {
				sv.Enum = append(sv.Enum, fmt.Sprint(e))
			}
			s.Variables[name] = sv
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *Document) servers() error {
	servers, err := readServers(d.raw.Servers, "servers")
	if err != nil {
		return err
	}
	d.Servers = servers
	if d.Version == "2.0" {
		switch {
		case d.raw.Host != "":
			scheme := "https"
			if len(d.raw.Schemes) > 0 {
				scheme = d.raw.Schemes[0]
			}
			d.Servers = append(d.Servers, Server{URL: scheme + "://" + d.raw.Host + d.raw.BasePath})
		case d.raw.BasePath != "":
			// Without a host, the API is where the document is served
			// from: the base path is relative to that.
			d.Servers = append(d.Servers, Server{URL: d.raw.BasePath})
		}
	}
	return nil
}

// credentialNames are the names of the parameters that carry an OAuth2 or
// bearer token where an API takes it as a parameter: RFC 6750's
// access_token, and token (Slack's).
var credentialNames = []string{"token", "access_token"}

// credentialOf returns the scheme whose credential a parameter in in,
// named name, of an operation with the requirements security carries, or
// "": the API key an apiKey scheme of the document names, or the token of
// an OAuth2 or bearer scheme the operation requires in a parameter named
// token or access_token.
func (d *Document) credentialOf(in, name string, security []map[string][]string) string {
	for _, k := range slices.Sorted(maps.Keys(d.SecuritySchemes)) {
		s := d.SecuritySchemes[k]
		if s.Type != TypeAPIKey || s.In != in { // an API key is never a form field; a token may be
			continue
		}
		if s.Param == name || in == "header" && strings.EqualFold(s.Param, name) {
			return k
		}
	}
	if in == "path" || !slices.Contains(credentialNames, strings.ToLower(name)) {
		return "" // a token in the path names a resource (Stripe's /v1/tokens/{token})
	}
	for _, alt := range security {
		for _, k := range sortedSchemes(alt) {
			if s := d.SecuritySchemes[k]; s != nil && s.Bearer() {
				return k
			}
		}
	}
	return ""
}

// sortedSchemes returns the scheme names of a requirement, sorted.
func sortedSchemes(req map[string][]string) []string { return slices.Sorted(maps.Keys(req)) }
