package risk

import (
	"regexp"
	"slices"
	"strings"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// view is what the engine reads of an operation: its words, split where
// people and generators join them ("cancelSubscription", "auth.revoke",
// "merge-async"), and where in the operation each word stands.
type view struct {
	op   *spec.Operation
	safe bool // GET, HEAD, OPTIONS, TRACE
	// id is the operationId's words without what names where it lives: a
	// namespace ("repos/" in "repos/merge") and an API group before a
	// version ("RbacAuthorizationV1" in "createRbacAuthorizationV1ClusterRole").
	id      []string
	summary []string
	// lead are the words that say what the operation does: the first word
	// of its id and of its summary, or of its description when it has no
	// summary.
	lead []string
	// desc is the description as plain lower-case text, for phrases;
	// descDone says it was made (only operations that change state need it).
	desc     string
	descDone bool
	// segments are the words of each static path segment after the API's
	// version (parameters left out), and joined the same segments with
	// their separators removed ("clusterrolebindings", "topups").
	segments [][]string
	joined   []string
	// pathWords are the words of all segments, then the joined segments;
	// named are the id's and the summary's words.
	pathWords, named []string
	// raw maps a joined segment back to how the path spells it, for
	// reasons ("api-keys", not "apikeys").
	raw map[string]string
	// last is the words of the path's final segment when it is static:
	// an action ("/capture", "/auth.revoke") or a collection ("/charges").
	last []string
	// create says the operation adds to the collection its path ends at.
	create bool
}

func newView(op *spec.Operation) *view {
	v := &view{op: op, safe: isSafe(op.Method), raw: map[string]string{}}
	v.id = idWords(op.ID, op.Path)
	v.summary = splitWords(op.Summary)
	segs := strings.Split(strings.Trim(op.Path, "/"), "/")
	start := 0
	for i, s := range segs {
		if versionSegment.MatchString(s) {
			start = i + 1
		}
	}
	for _, s := range segs[start:] {
		if s == "" || strings.HasPrefix(s, "{") {
			continue
		}
		w := splitWords(s)
		v.segments = append(v.segments, w)
		v.joined = append(v.joined, strings.Join(w, ""))
		v.raw[strings.Join(w, "")] = strings.ToLower(s)
	}
	for _, w := range v.segments {
		v.pathWords = append(v.pathWords, w...)
	}
	v.pathWords = append(v.pathWords, v.joined...)
	v.named = append(append(make([]string, 0, len(v.id)+len(v.summary)), v.id...), v.summary...)
	if n := len(segs); n > 0 && segs[n-1] != "" && !strings.HasPrefix(segs[n-1], "{") && len(v.segments) > 0 {
		v.last = v.segments[len(v.segments)-1]
		v.create = op.Method == "POST" || op.Method == "PUT"
	}
	lead := [][]string{v.id, v.summary}
	if len(v.summary) == 0 {
		// The summary names the operation; without one, the description's
		// first word does.
		lead = append(lead, splitWords(firstSentence(v.description())))
	}
	for i, words := range lead {
		if len(words) == 0 {
			continue
		}
		if _, f := lemma(words[0]); i == 0 && f == plural {
			// An id starts with a verb in its plain form ("createPod");
			// a plural there names a namespace ("views_open").
			continue
		}
		v.lead = append(v.lead, words[0])
	}
	return v
}

func isSafe(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// versionSegment is a path segment that names the API's version: what
// comes before it names the API, not the resource.
var versionSegment = regexp.MustCompile(`^(v\d+([a-z]+\d+)?|\d{4}-\d{2}-\d{2})$`)

// versionWord is the same inside an operationId ("V1", "V1beta1").
var versionWord = regexp.MustCompile(`^v\d+([a-z]+\d+)?$`)

// idWords splits an operationId, leaving out its namespace, any API
// group before a version word (but keeping its first word, the verb in ids
// such as "createRbacAuthorizationV1ClusterRole"), and the words that come
// only from the names of path parameters, which generated ids repeat
// ("GetShippingRatesShippingRateToken" for /shipping_rates/{shipping_rate_token}).
func idWords(id, path string) []string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	w := splitWords(id)
	for i := len(w) - 2; i > 0; i-- {
		if versionWord.MatchString(w[i]) {
			w = append([]string{w[0]}, w[i+1:]...)
			break
		}
	}
	if !strings.Contains(path, "{") {
		return w
	}
	var static, param []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			param = append(param, splitWords(seg)...)
		} else {
			static = append(static, splitWords(seg)...)
		}
	}
	out := w[:0:0]
	for _, x := range w {
		if !slices.Contains(param, x) || slices.Contains(static, x) {
			out = append(out, x)
		}
	}
	return out
}

// splitWords returns the lower-case words of s: runs of letters and
// digits, split where a lower-case letter or a digit meets an upper-case
// one ("cancelSubscription"), and before the last capital of a run of
// capitals that starts a word ("OpenIDKeyset": open, id, keyset).
func splitWords(s string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(s[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := s[i-1]
		switch {
		case isUpper(c) && (isLower(p) || isDigit(p)):
			flush(i)
			start = i
		case isUpper(c) && isUpper(p) && i+1 < len(s) && isLower(s[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(s))
	return out
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// plainText returns a description in lower case, in one pass, without
// HTML tags, Markdown emphasis and code marks, quote marks and GitHub's
// admonitions ("> [!NOTE]"), its spaces collapsed.
func plainText(s string) string {
	b := make([]byte, 0, len(s))
	space := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<' || c == '[' && i+1 < len(s) && s[i+1] == '!':
			end := byte('>')
			if c == '[' {
				end = ']'
			}
			if j := strings.IndexByte(s[i:], end); j >= 0 {
				i += j
			}
			c = ' '
		case c == '`':
			continue
		case c == '>' || c == '*' || c == '\n' || c == '\t' || c == '\r':
			c = ' '
		case isUpper(c):
			c += 'a' - 'A'
		}
		if c == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b = append(b, c)
	}
	return strings.TrimRight(string(b), " ")
}

// phrase returns the first match of re in text, looking only around the
// places where one of its key words occurs: a regular expression run
// over every description would cost more than loading the document.
func phrase(text string, re *regexp.Regexp, keys, hints []string) string {
	const before, after = 50, 50
	best, at := "", len(text)
	for _, k := range keys {
		for from := 0; from < len(text); {
			i := strings.Index(text[from:], k)
			if i < 0 {
				break
			}
			i += from
			lo, hi := max(0, i-before), min(len(text), i+len(k)+after)
			if !anyOf(text[lo:hi], hints) {
				from = i + len(k)
				continue
			}
			if loc := re.FindStringIndex(text[lo:hi]); loc != nil && lo+loc[0] < at {
				best, at = text[lo+loc[0]:lo+loc[1]], lo+loc[0]
			}
			from = i + len(k)
		}
	}
	return best
}

func anyOf(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return len(words) == 0
}

// firstSentence returns text up to its first full stop.
func firstSentence(text string) string {
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i]
	}
	return text
}

// description returns the description as plain lower-case text.
func (v *view) description() string {
	if !v.descDone {
		v.desc, v.descDone = plainText(v.op.Description), true
	}
	return v.desc
}

// spelt returns how the path spells w, when w is a joined segment.
func (v *view) spelt(w string) string {
	if r, ok := v.raw[w]; ok {
		return r
	}
	return w
}
