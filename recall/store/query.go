package store

import (
	"errors"
	"fmt"
	"strings"
)

// Query is what a search looks for: segments that match any of its
// alternatives, each of which matches all of its terms, in any order.
type Query struct {
	Any [][]Term
}

// Term is a word, a phrase (words in this order, side by side), or the
// start of a word.
type Term struct {
	Text           string
	Phrase, Prefix bool
}

// ErrQuery reports a search query that cannot be read.
var ErrQuery = errors.New("bad search query")

// ParseQuery reads a search query: words, all of which a segment holds,
// in any order; "a phrase" in double quotes, its words side by side and
// in order; OR (in capitals) between alternatives; word* for the words
// that start so. Case and punctuation do not count.
func ParseQuery(s string) (Query, error) {
	var q Query
	var group []Term
	end := func() error {
		if len(group) == 0 {
			return fmt.Errorf("%w %q: OR needs words on both sides, as in bridge OR library", ErrQuery, s)
		}
		q.Any, group = append(q.Any, group), nil
		return nil
	}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return q, fmt.Errorf("%w: search for at least one word", ErrQuery)
	}
	for rest != "" {
		var t Term
		if rest[0] == '"' {
			text, after, ok := strings.Cut(rest[1:], `"`)
			if !ok {
				return q, fmt.Errorf(`%w %q: a phrase opened with " is not closed`, ErrQuery, s)
			}
			t, rest = Term{Text: strings.Join(words(text), " "), Phrase: true}, after
		} else {
			i := strings.IndexAny(rest, " \t\n\"")
			if i < 0 {
				i = len(rest)
			}
			t.Text, rest = rest[:i], rest[i:]
			if t.Text == "OR" {
				if err := end(); err != nil {
					return q, err
				}
				rest = strings.TrimSpace(rest)
				continue
			}
			if p, ok := strings.CutSuffix(t.Text, "*"); ok {
				t.Text, t.Prefix = p, true
			}
			t.Text = strings.Join(words(t.Text), " ")
			t.Phrase = strings.Contains(t.Text, " ") // "don't" is two words
		}
		rest = strings.TrimSpace(rest)
		if t.Text == "" {
			if t.Prefix {
				return q, fmt.Errorf("%w %q: * ends the start of a word, as in bri*", ErrQuery, s)
			}
			continue // punctuation alone
		}
		group = append(group, t)
	}
	return q, end()
}

// words splits s into its words, lowercased, punctuation dropped, as
// both stores' indexes read a transcript.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !isSpaceOrPunct(r))
	})
}

// isSpaceOrPunct reports the characters past ASCII that separate words.
func isSpaceOrPunct(r rune) bool {
	return strings.ContainsRune("\u00a0\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00ab\u00bb\u00bf\u00a1", r)
}

// Words is the query of all of words, in any order.
func Words(words ...string) Query {
	var g []Term
	for _, w := range words {
		g = append(g, Term{Text: w})
	}
	return Query{Any: [][]Term{g}}
}

// fts5 is q as an FTS5 query; each word a quoted string, so that nothing
// of a transcript's words is read as syntax.
func (q Query) fts5() string {
	alts := make([]string, len(q.Any))
	for i, g := range q.Any {
		terms := make([]string, len(g))
		for j, t := range g {
			terms[j] = `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
			if t.Prefix {
				terms[j] += " *"
			}
		}
		alts[i] = "(" + strings.Join(terms, " AND ") + ")"
	}
	return strings.Join(alts, " OR ")
}

// tsquery is q as a PostgreSQL tsquery expression whose texts are the
// parameters from $first on, and those parameters.
func (q Query) tsquery(first int) (string, []any) {
	var args []any
	param := func(v string) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", first+len(args)-1)
	}
	alts := make([]string, len(q.Any))
	for i, g := range q.Any {
		terms := make([]string, len(g))
		for j, t := range g {
			ws := strings.Fields(t.Text)
			switch {
			case t.Prefix:
				// The last word is a prefix: 'bri':*, after the phrase's others.
				lex := make([]string, len(ws))
				for k, w := range ws {
					lex[k] = "'" + strings.ReplaceAll(w, "'", "''") + "'"
				}
				lex[len(lex)-1] += ":*"
				terms[j] = "to_tsquery('simple', " + param(strings.Join(lex, " <-> ")) + ")"
			case t.Phrase:
				terms[j] = "phraseto_tsquery('simple', " + param(t.Text) + ")"
			default:
				terms[j] = "plainto_tsquery('simple', " + param(t.Text) + ")"
			}
		}
		alts[i] = "(" + strings.Join(terms, " && ") + ")"
	}
	return strings.Join(alts, " || "), args
}
