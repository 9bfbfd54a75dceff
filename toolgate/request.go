package toolgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// argument is a parameter as an agent gives it.
type argument struct {
	name  string
	param *spec.Parameter
}

// locationRank orders the locations for naming: a path parameter keeps
// its name over a query parameter of the same name, and so on.
var locationRank = map[string]int{"path": 0, "query": 1, "header": 2, "cookie": 3}

// arguments returns the parameters of op that an agent may set, under
// their argument names, the name of the body's argument, and the name of
// the argument that chooses the body's media type ("" when the body
// offers no choice).
//
// A parameter's argument is named after it. When parameters in different
// locations share a name, the one first in the order path, query, header,
// cookie keeps the name and each other is prefixed with its location:
// "id" (the path's) and "query_id". The body is "body", or "requestBody"
// when a parameter has that name; its media type, body_content_type.
// Names are stable: they depend on the document only.
func arguments(op *spec.Operation) ([]argument, string, string) {
	var args []argument
	first := map[string]int{} // name → best rank
	for i := range op.Parameters {
		p := &op.Parameters[i]
		if p.In == "header" && ForbiddenHeader(p.Name, config.Auth{}) || p.Credential != "" {
			continue // never settable from arguments: the caller fills a credential
		}
		if _, ok := locationRank[p.In]; !ok {
			continue
		}
		args = append(args, argument{name: p.Name, param: p})
		if r, ok := first[p.Name]; !ok || locationRank[p.In] < r {
			first[p.Name] = locationRank[p.In]
		}
	}
	used := map[string]bool{}
	var renamed []int
	for i, a := range args {
		if locationRank[a.param.In] == first[a.name] && !used[a.name] {
			used[a.name] = true
			continue
		}
		renamed = append(renamed, i)
	}
	for _, i := range renamed {
		args[i].name = unique(args[i].param.In+"_"+args[i].param.Name, used)
	}
	body, choice := "", ""
	if op.Body != nil {
		body = "body"
		if used[body] {
			body = unique("requestBody", used)
		}
		used[body] = true
		if len(op.Body.Choices) > 0 {
			choice = unique(body+"_content_type", used)
		}
	}
	return args, body, choice
}

// unique returns name, or name with the first free suffix _2, _3…, and
// marks it used.
func unique(name string, used map[string]bool) string {
	n := name
	for k := 2; used[n]; k++ {
		n = name + "_" + strconv.Itoa(k)
	}
	used[n] = true
	return n
}

// request builds the upstream request for t from the arguments a, decoded
// with their numbers as written, and the form fields of auth that carry a
// credential (its headers, query parameters and cookies are added as the
// request is sent). Every value is written once, in the style the
// document gives it: a path value cannot leave its segment or name
// another resource, only parameters the document declares are sent, and
// no argument can set a forbidden header or the Cookie header. A query
// that the document writes in the path ("/responses?beta=true") is sent
// as the query's first part.
func (c *Caller) request(ctx context.Context, t *Tool, a map[string]any, auth *callAuth) (*http.Request, error) {
	op := t.op
	params, bodyArg, _ := arguments(op)
	vars := map[string]string{}
	var query, cookies []string
	header := http.Header{}
	for _, arg := range params {
		p := arg.param
		v, given := a[arg.name]
		if !given || v == nil {
			if p.Required {
				return nil, fmt.Errorf("the argument %q is required", arg.name)
			}
			continue
		}
		switch p.In {
		case "path":
			s, err := expandPath(p, v)
			if err != nil {
				return nil, fmt.Errorf("the argument %q %v", arg.name, err)
			}
			vars[p.Name] = s
		case "query":
			pairs := queryPairs(p, v)
			if len(pairs) == 0 && p.Required {
				// A required list given empty is sent empty, not left out.
				pairs = []string{pctEscape(p.Name) + "="}
			}
			query = append(query, pairs...)
		case "header":
			if ForbiddenHeader(p.Name, c.auth) {
				continue
			}
			s, err := headerValue(p, v)
			if err != nil {
				return nil, fmt.Errorf("the argument %q (the header %s) %v", arg.name, p.Name, err)
			}
			header.Set(p.Name, s)
		case "cookie":
			if !httpguts.ValidHeaderFieldName(p.Name) {
				return nil, fmt.Errorf("the document names a cookie %q, which is not a valid cookie name: the tool cannot send it", p.Name)
			}
			cookies = append(cookies, cookiePairs(p, v)...)
		}
	}
	template, literal, _ := strings.Cut(op.Path, "?")
	path, err := fillPath(template, vars)
	if err != nil {
		return nil, err
	}
	base := c.baseOf(t)
	u := *base
	u.RawPath = strings.TrimRight(base.EscapedPath(), "/") + path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, fmt.Errorf("the path %s: %v", u.RawPath, err)
	}
	if literal != "" {
		query = append([]string{literalQuery(literal)}, query...)
	}
	if base.RawQuery != "" {
		query = append([]string{base.RawQuery}, query...)
	}
	u.RawQuery, u.Fragment, u.RawFragment = strings.Join(query, "&"), "", ""

	var body []byte
	if b := op.Body; b != nil {
		v, ok := a[bodyArg]
		if (!ok || v == nil) && len(auth.fields) > 0 {
			v, ok = map[string]any{}, true // the form carries a credential
		}
		if ok && v != nil {
			data, ct, err := c.encodeBody(t, v, bodyArg, a, auth.fields)
			if err != nil {
				return nil, err
			}
			body = data
			header.Set("Content-Type", ct)
		}
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, u.String(), r)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("the document names a header %q, which is not a valid header name: the tool cannot send it", k)
		}
		req.Header[k] = vs
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if req.Header.Get("Accept") == "" {
		// An Accept the document lets the agent choose is the agent's.
		req.Header.Set("Accept", accept(op))
	}
	return req, nil
}

// literalQuery writes a query that the document writes in a path key as
// a URL's query: its reserved characters kept, anything else escaped.
func literalQuery(q string) string {
	return escape(q, func(s string, i int) bool {
		c := s[i]
		return isUnreserved(c) || strings.IndexByte("=&+,;:@/?!$'()*", c) >= 0 ||
			c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
	})
}

// accept is the Accept header of a request of op: the media types of its
// successful answers, a JSON one alone when there is one, else all of
// them, preferred in the document's order and followed by those of its
// other answers at a lower quality; application/json when the document
// names none.
func accept(op *spec.Operation) string {
	var ok []string
	for _, ct := range op.Answers {
		if m := mediaType(ct); m != "" && !slices.Contains(ok, m) {
			ok = append(ok, m)
		}
	}
	switch {
	case len(ok) == 0:
		return "application/json"
	case strings.Contains(ok[0], "json") || ok[0] == "*/*":
		return ok[0] // the preferred: toolgate reads JSON best
	}
	out := slices.Clone(ok)
	for _, ct := range op.ErrorAnswers {
		if m := mediaType(ct); m != "" && !slices.Contains(ok, m) && !slices.Contains(out, m+";q=0.5") {
			out = append(out, m+";q=0.5")
		}
	}
	return strings.Join(out, ", ")
}

// fillPath puts the expanded values vars into the path template, whose
// literal parts it escapes, and refuses a path with a dot segment.
func fillPath(template string, vars map[string]string) (string, error) {
	var b strings.Builder
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString((&url.URL{Path: rest}).EscapedPath())
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return "", fmt.Errorf("the document's path %s has an unclosed \"{\": the tool cannot be called", template)
		}
		b.WriteString((&url.URL{Path: rest[:open]}).EscapedPath())
		name := rest[open+1 : open+end]
		v, ok := vars[name]
		if !ok {
			return "", fmt.Errorf("the document's path %s has {%s}, which no path parameter of the operation describes: the tool cannot be called", template, name)
		}
		b.WriteString(v)
		rest = rest[open+end+1:]
	}
	path := b.String()
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("the path %s would have a %q segment, which names another resource than the one meant: give the resource's own name", path, seg)
		}
	}
	return path, nil
}

// expandPath writes a path parameter's value as RFC 6570 does (OpenAPI's
// simple, label and matrix styles): every character but the unreserved
// ones percent-encoded once. An empty value, ".", and ".." are refused:
// each would make the path name another resource.
func expandPath(p *spec.Parameter, v any) (string, error) {
	w := writer{esc: pctEscape, delim: pathDelim}
	var s string
	switch {
	case p.MultiSegment && !isEmpty(v):
		return multiSegment(text(v))
	case p.ContentType != "":
		s = pctEscape(text(v))
	case p.Style == spec.StyleLabel:
		s = "." + w.joined(v, p.Explode, ".", ",")
	case p.Style == spec.StyleMatrix:
		s = w.matrix(p.Name, v, p.Explode)
	default:
		s = w.joined(v, p.Explode, ",", delimiter(p.Style))
	}
	switch {
	case isEmpty(v):
		return "", fmt.Errorf("must not be empty: it names a part of the path")
	case s == "." || s == "..":
		return "", fmt.Errorf("must not be %s: as a path segment it names another resource than the one meant", quoted(v))
	}
	return s, nil
}

// multiSegment writes a value that spans path segments, such as a file's
// path in a repository: each segment is encoded once and the "/" between
// them kept. An empty segment, ".", and ".." are refused, as a whole value
// would be.
func multiSegment(v string) (string, error) {
	segs := strings.Split(v, "/")
	for i, seg := range segs {
		switch seg {
		case "":
			return "", fmt.Errorf("must not have an empty segment (%q): give the path without a leading, trailing or doubled \"/\"", v)
		case ".", "..":
			return "", fmt.Errorf("must not have a %q segment (%q): it would name another resource than the one meant", seg, v)
		}
		segs[i] = pctEscape(seg)
	}
	return strings.Join(segs, "/"), nil
}

// pathDelim writes a delimiter in a path: RFC 6570's own as they are,
// Swagger 2.0's others percent-encoded.
func pathDelim(d string) string {
	switch d {
	case ",", ".", ";":
		return d
	}
	return pctEscape(d)
}

// quoted is v as a message shows it: a string quoted, anything else as JSON.
func quoted(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return text(v)
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// delimiter joins the items of an array written in style without
// exploding it.
func delimiter(style string) string {
	switch style {
	case spec.StyleSpaceDelimited:
		return " "
	case spec.StylePipeDelimited:
		return "|"
	case spec.StyleTabDelimited:
		return "\t"
	}
	return ","
}

// writer writes values in OpenAPI's styles: esc escapes names and values,
// delim the delimiters between the items of a list.
type writer struct {
	esc, delim func(string) string
}

// joined writes v as the simple style does: a list's items, or an
// object's keys and values, joined by sep; an exploded object's pairs are
// key=value, joined by explodeSep for a list.
func (w writer) joined(v any, explode bool, explodeSep, sep string) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = w.esc(text(e))
		}
		if explode {
			return strings.Join(parts, w.delim(explodeSep))
		}
		return strings.Join(parts, w.delim(sep))
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(x) {
			if explode {
				parts = append(parts, w.esc(k)+"="+w.esc(text(x[k])))
			} else {
				parts = append(parts, w.esc(k), w.esc(text(x[k])))
			}
		}
		if explode {
			return strings.Join(parts, w.delim(explodeSep))
		}
		return strings.Join(parts, w.delim(","))
	}
	return w.esc(text(v))
}

// matrix writes v in the matrix style: ;name=value.
func (w writer) matrix(name string, v any, explode bool) string {
	n := ";" + w.esc(name)
	switch x := v.(type) {
	case []any:
		if !explode {
			return n + "=" + w.joined(x, false, "", ",")
		}
		var b strings.Builder
		for _, e := range x {
			b.WriteString(n + "=" + w.esc(text(e)))
		}
		return b.String()
	case map[string]any:
		if !explode {
			return n + "=" + w.joined(x, false, "", ",")
		}
		var b strings.Builder
		for _, k := range sortedKeys(x) {
			b.WriteString(";" + w.esc(k) + "=" + w.esc(text(x[k])))
		}
		return b.String()
	}
	if s := text(v); s != "" {
		return n + "=" + w.esc(s)
	}
	return n
}

// pairs writes v, the value of name, as name-value pairs in a form or a
// query: the form style (exploded or not), the delimited styles and
// deepObject. deepObject nests as Stripe's libraries do: metadata[order]=42,
// items[0][price]=p, an empty list as name= (which clears it).
func (w writer) pairs(name string, v any, style string, explode bool) [][2]string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		if style == spec.StyleDeepObject {
			return w.deep(w.esc(name), x)
		}
		if len(x) == 0 {
			return nil
		}
		if explode {
			out := make([][2]string, len(x))
			for i, e := range x {
				out[i] = [2]string{w.esc(name), w.esc(text(e))}
			}
			return out
		}
		return [][2]string{{w.esc(name), w.joined(x, false, "", delimiter(style))}}
	case map[string]any:
		switch {
		case style == spec.StyleDeepObject:
			return w.deep(w.esc(name), x)
		case len(x) == 0:
			return nil
		case explode:
			var out [][2]string
			for _, k := range sortedKeys(x) {
				if x[k] != nil {
					out = append(out, [2]string{w.esc(k), w.esc(text(x[k]))})
				}
			}
			return out
		}
		var parts []string
		for _, k := range sortedKeys(x) {
			parts = append(parts, w.esc(k), w.esc(text(x[k])))
		}
		return [][2]string{{w.esc(name), strings.Join(parts, w.delim(delimiter(style)))}}
	}
	return [][2]string{{w.esc(name), w.esc(text(v))}}
}

// deep writes v under key in the deepObject style, nested to any depth.
func (w writer) deep(key string, v any) [][2]string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		if len(x) == 0 {
			return [][2]string{{key, ""}}
		}
		var out [][2]string
		for i, e := range x {
			out = append(out, w.deep(key+"["+strconv.Itoa(i)+"]", e)...)
		}
		return out
	case map[string]any:
		var out [][2]string
		for _, k := range sortedKeys(x) {
			out = append(out, w.deep(key+"["+w.esc(k)+"]", x[k])...)
		}
		return out
	}
	return [][2]string{{key, w.esc(text(v))}}
}

// queryPairs writes a query parameter as name=value pairs, escaped for a
// URL's query (a space as %20).
func queryPairs(p *spec.Parameter, v any) []string {
	esc := pctEscape
	if p.AllowReserved {
		esc = reservedEscape
	}
	w := writer{esc: esc, delim: queryDelim}
	var pairs [][2]string
	if p.ContentType != "" {
		pairs = [][2]string{{esc(p.Name), esc(text(v))}}
	} else {
		pairs = w.pairs(p.Name, v, p.Style, p.Explode)
	}
	out := make([]string, len(pairs))
	for i, kv := range pairs {
		out[i] = kv[0] + "=" + kv[1]
	}
	return out
}

// queryDelim writes the delimiters of the delimited styles in a query as
// OpenAPI's examples do.
func queryDelim(d string) string {
	switch d {
	case " ":
		return "%20"
	case "\t":
		return "%09"
	}
	return d
}

// headerValue writes a header parameter in the simple style. Header values
// are not percent-encoded; one that could end the header or start another
// is refused.
func headerValue(p *spec.Parameter, v any) (string, error) {
	w := writer{esc: func(s string) string { return s }, delim: func(s string) string { return s }}
	s := text(v)
	if p.ContentType == "" {
		s = w.joined(v, p.Explode, ",", delimiter(p.Style))
	}
	if !httpguts.ValidHeaderFieldValue(s) {
		return "", fmt.Errorf("must not contain line breaks or other control characters")
	}
	return s, nil
}

// cookiePairs writes a cookie parameter in the form style as name=value
// pairs, values percent-encoded so that none can end the pair or start
// another cookie.
func cookiePairs(p *spec.Parameter, v any) []string {
	w := writer{esc: pctEscape, delim: func(s string) string { return s }}
	var pairs [][2]string
	if p.ContentType != "" {
		pairs = [][2]string{{p.Name, pctEscape(text(v))}}
	} else {
		pairs = w.pairs(p.Name, v, spec.StyleForm, p.Explode)
	}
	out := make([]string, len(pairs))
	for i, kv := range pairs {
		if kv[0] == pctEscape(p.Name) {
			kv[0] = p.Name // a valid token, checked before
		}
		out[i] = kv[0] + "=" + kv[1]
	}
	return out
}

// text is a value's text in a URL, a form or a header: a string as it is,
// a number as written, an object or a list as JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	return string(marshal(v))
}

// marshal is JSON without HTML escaping: the bytes are for an API, not a
// web page.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

const upperhex = "0123456789ABCDEF"

// escape percent-encodes every byte of s that keep does not keep.
func escape(s string, keep func(s string, i int) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; keep(s, i) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperhex[c>>4])
			b.WriteByte(upperhex[c&15])
		}
	}
	return b.String()
}

// pctEscape is RFC 3986 percent-encoding of all but the unreserved
// characters: RFC 6570's simple expansion.
func pctEscape(s string) string {
	return escape(s, func(s string, i int) bool { return isUnreserved(s[i]) })
}

// reservedEscape is RFC 6570's reserved expansion, for allowReserved:
// reserved characters and percent-encoded triplets pass as they are, but
// for "&", "=" and "#", which would change the query's shape rather than
// the value.
func reservedEscape(s string) string {
	return escape(s, func(s string, i int) bool {
		c := s[i]
		switch {
		case isUnreserved(c) || strings.IndexByte(":/?[]@!$'()*+,;", c) >= 0:
			return true
		case c == '%':
			return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
		}
		return false
	})
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
