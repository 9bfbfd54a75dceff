package toolgate

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Index finds tools by what an agent says it wants to do. It ranks with a
// hand-written scorer: each tool's name, summary, path, tags and the start
// of its description are cut into words (camelCase, snake_case, paths and
// dots split; plurals and -ing/-ed endings cut), each word weighted by the
// field it came from and by how rare it is among the tools. A query's
// verbs also say what the agent means to do (read, create, change,
// delete), which favours the tools whose method does that.
type Index struct {
	tools []*Tool
	docs  []indexed
	idf   map[string]float64
}

// indexed is one tool's words, each with the weight of the best field it
// appears in.
type indexed struct {
	terms map[string]float64
	// name is the words of the tool's name, for how much of it a query
	// covers.
	name []string
	// collection is true when the path does not end in a parameter: the
	// tool acts on a set of things rather than one.
	collection bool
	deprecated bool
}

// Weights of the fields a word can come from.
const (
	weightName        = 3.0
	weightSummary     = 2.5
	weightPath        = 2.0
	weightTag         = 1.5
	weightPathParam   = 0.75
	weightDescription = 0.75
	// descriptionWords bounds how much of a description is indexed: its
	// start says what the operation does; the rest, how.
	descriptionWords = 40
)

// NewIndex indexes tools. The server indexes only the exposed tools: a
// hidden tool is never found.
func NewIndex(tools []*Tool) *Index {
	ix := &Index{tools: tools, docs: make([]indexed, len(tools)), idf: map[string]float64{}}
	df := map[string]int{}
	for i, t := range tools {
		d := indexed{terms: map[string]float64{}, deprecated: t.op != nil && t.op.Deprecated}
		add := func(text string, w float64) {
			for _, term := range terms(text) {
				d.terms[term] = max(d.terms[term], w)
			}
		}
		add(t.Name, weightName)
		for _, term := range terms(t.Name) {
			if !slices.Contains(d.name, term) {
				d.name = append(d.name, term)
			}
		}
		if t.op != nil && t.op.Summary != "" {
			add(t.op.Summary, weightSummary)
		}
		for _, seg := range strings.Split(t.Path, "/") {
			if strings.HasPrefix(seg, "{") {
				add(seg, weightPathParam)
			} else {
				add(seg, weightPath)
			}
		}
		d.collection = !strings.HasSuffix(t.Path, "}")
		for _, tag := range t.Tags {
			add(tag, weightTag)
		}
		desc := t.Description
		if t.op != nil {
			desc = t.op.Description
		}
		if words := strings.Fields(desc); len(words) > descriptionWords {
			desc = strings.Join(words[:descriptionWords], " ")
		}
		add(desc, weightDescription)
		for term := range d.terms {
			df[term]++
		}
		ix.docs[i] = d
	}
	n := float64(len(tools))
	for term, k := range df {
		ix.idf[term] = math.Log(1 + (n-float64(k)+0.5)/(float64(k)+0.5))
	}
	return ix
}

// Query is what to search for: words, and filters that a tool must pass.
type Query struct {
	// Words is what the agent wants to do, in its own words.
	Words string
	// Tag, when set, keeps the tools with that tag (case-insensitive).
	Tag string
	// Method, when set, keeps the tools with that HTTP method.
	Method string
	// Path, when set, keeps the tools whose path contains it
	// (case-insensitive).
	Path string
}

// Hit is a tool found, with its score.
type Hit struct {
	Tool  *Tool
	Score float64
}

// Search returns the tools that pass q's filters, best first, and how
// many there are. Without words, every tool that passes the filters is a
// hit, in name order.
func (ix *Index) Search(q Query, limit int) ([]Hit, int) {
	qterms := terms(q.Words)
	intent := intentOf(q.Words)
	var hits []Hit
	for i, t := range ix.tools {
		if !passes(t, q) {
			continue
		}
		if len(qterms) == 0 {
			hits = append(hits, Hit{Tool: t})
			continue
		}
		if s := ix.score(i, qterms, intent); s > 0 {
			hits = append(hits, Hit{Tool: t, Score: s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return hits[a].Tool.Name < hits[b].Tool.Name
	})
	total := len(hits)
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total
}

// passes reports whether t passes q's filters.
func passes(t *Tool, q Query) bool {
	if q.Method != "" && !strings.EqualFold(t.Method, q.Method) {
		return false
	}
	if q.Path != "" && !strings.Contains(strings.ToLower(t.Path), strings.ToLower(q.Path)) {
		return false
	}
	if q.Tag != "" {
		for _, tag := range t.Tags {
			if strings.EqualFold(tag, q.Tag) {
				return true
			}
		}
		return false
	}
	return true
}

// score rates tool i for the query's words and intent; 0 is no match.
func (ix *Index) score(i int, qterms []string, in intent) float64 {
	d := ix.docs[i]
	var s float64
	matched := 0
	seen := map[string]bool{}
	for _, q := range qterms {
		if seen[q] {
			continue
		}
		seen[q] = true
		w := d.terms[q]
		// A word of the same intent (fetch for get, remove for delete)
		// counts for less.
		for _, syn := range synonyms[q] {
			w = max(w, d.terms[syn]*0.6)
		}
		if w > 0 {
			matched++
			s += w * ix.idfOf(q)
		}
	}
	if matched == 0 {
		return 0
	}
	// A tool whose name the query covers better is the more precise
	// answer: listNamespacedPod over listPodForAllNamespaces for "list
	// the pods in a namespace".
	if len(d.name) > 0 {
		covered := 0
		for _, n := range d.name {
			if seen[n] {
				covered++
			}
		}
		s *= 0.75 + 0.25*float64(covered)/float64(len(d.name))
	}
	t := ix.tools[i]
	if in.methods != "" {
		if strings.Contains(in.methods, t.Method) {
			s *= 1.3
		} else {
			s *= 0.85
		}
	}
	if in.collection && d.collection {
		s *= 1.15
	}
	if d.deprecated {
		s *= 0.8
	}
	return s
}

func (ix *Index) idfOf(term string) float64 {
	if v, ok := ix.idf[term]; ok {
		return v
	}
	return 1
}

// intent is what a query's verbs say the agent means to do.
type intent struct {
	// methods are the HTTP methods that do it, space-separated; empty
	// when the query says nothing of it.
	methods string
	// collection says that it acts on a set of things: listing them, or
	// creating one among them (REST posts a new item to its collection).
	collection bool
}

// verbs are the words that say what an agent means to do, by the methods
// that do it. The first verb that the query holds decides.
var verbs = []struct {
	words      []string
	methods    string
	collection bool
}{
	{[]string{"list", "all", "search", "find", "enumerate"}, "GET", true},
	{[]string{"get", "read", "retrieve", "fetch", "show", "view", "look", "check", "describe", "download", "what", "which", "how", "when"}, "GET", false},
	{[]string{"create", "add", "new", "make", "post", "submit", "register", "upload", "send", "start", "open"}, "POST PUT", true},
	{[]string{"update", "change", "edit", "modify", "set", "rename", "replace", "patch"}, "PATCH PUT POST", false},
	{[]string{"delete", "remove", "destroy", "cancel", "drop"}, "DELETE", false},
}

// synonyms relate the verbs of one intent to one another.
var synonyms = func() map[string][]string {
	groups := [][]string{
		{"get", "read", "retrieve", "fetch", "show", "view", "describe"},
		{"list", "all", "enumerate", "search", "find"},
		{"create", "add", "new", "make", "post", "submit", "register"},
		{"update", "change", "edit", "modify", "set", "patch", "replace"},
		{"delete", "remove", "destroy", "drop"},
		{"repository", "repo"},
	}
	m := map[string][]string{}
	for _, g := range groups {
		stems := make([]string, len(g))
		for i, w := range g {
			stems[i] = stem(w)
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}()

// intentOf reads what the query's verbs say.
func intentOf(words string) intent {
	for _, w := range strings.FieldsFunc(strings.ToLower(words), notAlnum) {
		for _, v := range verbs {
			for _, verb := range v.words {
				if w == verb {
					return intent{methods: v.methods, collection: v.collection}
				}
			}
		}
	}
	return intent{}
}

// stopWords carry no meaning for a search.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "to": true, "for": true, "by": true, "with": true,
	"on": true, "at": true, "and": true, "or": true, "is": true, "are": true, "be": true, "it": true, "its": true,
	"my": true, "me": true, "i": true, "this": true, "that": true, "from": true, "into": true, "as": true,
	"would": true, "could": true, "should": true, "do": true, "does": true, "some": true, "any": true,
}

// terms cuts text into the words the index compares: split at every
// character that is not a letter or a digit and between the words of a
// camelCase name, lower-cased, stop words dropped, each stemmed.
func terms(text string) []string {
	var out []string
	for _, field := range strings.FieldsFunc(text, notAlnum) {
		for _, w := range splitCamel(field) {
			w = strings.ToLower(w)
			if stopWords[w] || w == "" {
				continue
			}
			out = append(out, stem(w))
		}
	}
	return out
}

func notAlnum(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// splitCamel splits a camelCase or PascalCase word: "listCoreV1Pod" is
// list, Core, V1, Pod; "HTTPServer" is HTTP, Server. Digits stay with the
// letters before them.
func splitCamel(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		var next rune
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		boundary := unicode.IsLower(prev) && unicode.IsUpper(cur) ||
			unicode.IsDigit(prev) && unicode.IsLetter(cur) ||
			unicode.IsUpper(prev) && unicode.IsUpper(cur) && next != 0 && unicode.IsLower(next)
		if boundary {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}

// stem cuts the common English endings, so that pods and pod, created
// and create, branches and branch compare equal. It is deliberately
// light: both sides of a comparison are cut the same way, so a cut need
// not be a word.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suffix := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suffix) && len(w)-len(suffix) >= 3 {
			w = w[:len(w)-len(suffix)]
			// running → run, starred → star
			if n := len(w); n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
