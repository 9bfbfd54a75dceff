package toolgate

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// upstreamOf returns the base URL of the upstream: override (--upstream,
// else upstream.url), against which a relative server of the document is
// resolved, else the document's server that up chooses, with its
// variables. The credentials go to its origin only; when calls carry one
// (secret says from where), a server that only the document names is
// refused, unless the configuration chose it (upstream.server).
//
// It returns the document's chosen server too (nil if it names none), by
// which operationBase places an operation's own servers.
func upstreamOf(doc *spec.Document, override string, up config.Upstream, secret string) (base, server *url.URL, err error) {
	if err := checkVariables(doc, up); err != nil {
		return nil, nil, err
	}
	if len(doc.Servers) > 0 {
		s, err := chooseServer(doc.Servers, up.Server, true)
		if err != nil {
			return nil, nil, err
		}
		if server, err = expandServer(s, up.Variables); err != nil {
			return nil, nil, err
		}
	} else if up.Server != "" {
		return nil, nil, fmt.Errorf("upstream.server is %q, but the document names no server: give upstream.url", up.Server)
	}
	if override != "" {
		base, err := url.Parse(override)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
			return nil, nil, fmt.Errorf("upstream %q: give an http or https URL (config upstream.url, --upstream, or the document's servers)", override)
		}
		if server != nil && !server.IsAbs() {
			// The document's server is relative to where the API is: the
			// configured URL.
			return resolveAgainst(base, server), server, nil
		}
		return base, server, nil
	}
	switch {
	case server == nil:
		return nil, nil, fmt.Errorf("the document names no server: give --upstream URL or upstream.url in the configuration")
	case !server.IsAbs():
		return nil, nil, fmt.Errorf("the document's server %s is relative to where the API is served: give that with --upstream URL or upstream.url "+
			"(such as https://api.example.com), and the server is resolved against it", server)
	case server.Scheme != "http" && server.Scheme != "https" || server.Host == "":
		return nil, nil, fmt.Errorf("the document's server %s is not an http or https URL: give --upstream URL or upstream.url", server.Redacted())
	case secret != "" && up.Server == "":
		// The document is untrusted: the server it names must not receive
		// the secret unless a person named it too.
		return nil, nil, fmt.Errorf("the configuration sends credentials (from %s), but no upstream URL is configured, and credentials never go to a server only the document names: "+
			"give --upstream URL or upstream.url, or choose the document's server in the configuration (upstream.server: 0 for %s)", secret, server.Redacted())
	}
	return server, server, nil
}

// resolveAgainst resolves a relative server URL against base, as a
// directory: /v1 on https://api.example.com is https://api.example.com/v1,
// v1 on https://host/api is https://host/api/v1.
func resolveAgainst(base, ref *url.URL) *url.URL {
	b := *base
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
		if b.RawPath != "" {
			b.RawPath += "/"
		}
	}
	u := b.ResolveReference(ref)
	if u.Path != "/" {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	}
	return u
}

// chooseServer returns the server of list that choice names: its index
// (0 is the first) or its description, or the first when choice is
// empty. Where strict is false (an operation's own servers), a choice
// that names none of them chooses the first.
func chooseServer(list []spec.Server, choice string, strict bool) (spec.Server, error) {
	if choice == "" {
		return list[0], nil
	}
	for _, s := range list {
		if strings.EqualFold(strings.TrimSpace(s.Description), choice) {
			return s, nil
		}
	}
	if i, err := strconv.Atoi(choice); err == nil && i >= 0 && i < len(list) && strict {
		return list[i], nil
	}
	if !strict {
		return list[0], nil
	}
	var names []string
	for i, s := range list {
		n := fmt.Sprintf("%d: %s", i, s.URL)
		if s.Description != "" {
			n += " (" + s.Description + ")"
		}
		names = append(names, n)
	}
	return spec.Server{}, fmt.Errorf("upstream.server is %q, which names none of the document's servers; give an index or a description: %s", choice, strings.Join(names, "; "))
}

// expandServer returns s's URL with its variables replaced: by vars, or
// by their defaults. A value that the variable's enum does not list is
// refused.
func expandServer(s spec.Server, vars map[string]string) (*url.URL, error) {
	raw := s.URL
	for name, v := range s.Variables {
		value, given := vars[name]
		if !given {
			value = v.Default
		}
		if value == "" {
			return nil, fmt.Errorf("the server %s has the variable {%s} without a default: give its value in upstream.variables.%s", s.URL, name, name)
		}
		if len(v.Enum) > 0 && !slices.Contains(v.Enum, value) {
			where := "its default"
			if given {
				where = "upstream.variables." + name
			}
			return nil, fmt.Errorf("the server %s's variable {%s} is %q (%s), which is not among its values: %s", s.URL, name, value, where, strings.Join(v.Enum, ", "))
		}
		raw = strings.ReplaceAll(raw, "{"+name+"}", value)
	}
	if i := strings.IndexByte(raw, '{'); i >= 0 {
		return nil, fmt.Errorf("the server %s has a variable %s that it does not declare: give --upstream URL or upstream.url", s.URL, raw[i:])
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the server %s: %v", raw, err)
	}
	return u, nil
}

// checkVariables refuses a value of upstream.variables that no server of
// the document has a variable for: a misspelt name must not go unnoticed.
func checkVariables(doc *spec.Document, up config.Upstream) error {
	known := map[string]bool{}
	add := func(list []spec.Server) {
		for _, s := range list {
			for v := range s.Variables {
				known[v] = true
			}
		}
	}
	add(doc.Servers)
	for _, op := range doc.Operations {
		add(op.Servers)
	}
	for _, name := range slices.Sorted(maps.Keys(up.Variables)) {
		if !known[name] {
			has := "has none"
			if len(known) > 0 {
				has = "has " + strings.Join(slices.Sorted(maps.Keys(known)), ", ")
			}
			return fmt.Errorf("upstream.variables.%s names a variable that no server of the document has (it %s)", name, has)
		}
	}
	return nil
}

// operationBase returns where calls of op go, when the document gives the
// operation (or its path item) servers of its own: chosen and expanded
// as the document's are, a relative one resolved against base, and an
// absolute one at its own origin only if the configuration lists it in
// upstream.origins. Otherwise its path is called at base's origin, as the
// document's server (server) is moved there: an upstream given for
// staging or a proxy never sends one operation elsewhere unasked. Nil
// means base.
func operationBase(op *spec.Operation, base, server *url.URL, up config.Upstream) (*url.URL, error) {
	if len(op.Servers) == 0 {
		return nil, nil
	}
	s, _ := chooseServer(op.Servers, up.Server, false)
	u, err := expandServer(s, up.Variables)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", op.Where, err)
	}
	if !u.IsAbs() {
		return resolveAgainst(base, u), nil
	}
	if listedOrigin(u, up.Origins) && !(server != nil && sameOrigin(u, server)) {
		return u, nil
	}
	moved := *u
	moved.Scheme, moved.Host = base.Scheme, base.Host
	return &moved, nil
}

// checkOrigins refuses an origin of upstream.origins where the document
// serves no operation: a misspelt origin must not go unnoticed.
func checkOrigins(cat *Catalog, up config.Upstream, base *url.URL) error {
	for _, o := range up.Origins {
		ou, _ := url.Parse(o)
		found := sameOrigin(ou, base)
		for _, t := range cat.Tools {
			for _, s := range t.op.Servers {
				if u, err := expandServer(s, up.Variables); err == nil && u.IsAbs() && sameOrigin(u, ou) {
					found = true
				}
			}
		}
		if !found {
			return fmt.Errorf("upstream.origins lists %s, where the document serves no operation", o)
		}
	}
	return nil
}

// listedOrigin reports whether u's origin is one of origins.
func listedOrigin(u *url.URL, origins []string) bool {
	for _, o := range origins {
		if ou, err := url.Parse(o); err == nil && sameOrigin(u, ou) {
			return true
		}
	}
	return false
}

// elsewhere lists the operations of doc that the document serves on an
// origin of their own which upstream.origins does not list, and that are
// called at the upstream instead: a warning for inspect and serve.
func elsewhere(cat *Catalog, up config.Upstream) []string {
	var out []string
	for _, t := range cat.Tools {
		if len(t.op.Servers) == 0 {
			continue
		}
		s, _ := chooseServer(t.op.Servers, up.Server, false)
		u, err := expandServer(s, up.Variables)
		if err != nil || !u.IsAbs() || listedOrigin(u, up.Origins) {
			continue
		}
		if len(cat.Doc.Servers) > 0 {
			chosen, _ := chooseServer(cat.Doc.Servers, up.Server, false)
			if d, err := expandServer(chosen, up.Variables); err == nil && d.IsAbs() && sameOrigin(u, d) {
				continue
			}
		}
		out = append(out, fmt.Sprintf("%s: the document serves it at %s://%s, which upstream.origins does not list, so it is called at the upstream",
			t.Name, u.Scheme, u.Host))
	}
	return out
}
