package spec

import (
	"strings"
	"unicode/utf8"
)

// briefSchemaText bounds a description within a brief schema, in bytes.
const briefSchemaText = 160

// Brief shortens a document's text to what an agent reading a list of
// tools needs, in at most limit bytes: its paragraphs from the first, as
// many as fit whole, without tables, code blocks or HTML comments, each
// on one line. A first paragraph longer than limit is cut after its last
// sentence that fits, or else its last word, and the cut marked with "…".
func Brief(text string, limit int) string {
	var out []string
	size := 0
	for _, p := range paragraphs(text) {
		if size+len(p)+2*len(out) > limit {
			if len(out) == 0 {
				out = append(out, cutText(p, limit))
			}
			break
		}
		out = append(out, p)
		size += len(p)
	}
	return strings.Join(out, "\n\n")
}

// paragraphs returns text's paragraphs of prose, each on one line.
func paragraphs(text string) []string {
	var out, lines []string
	flush := func() {
		if len(lines) > 0 {
			out = append(out, strings.Join(lines, " "))
			lines = nil
		}
	}
	fenced, comment := false, false
	for line := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~"):
			flush()
			fenced = !fenced
		case fenced:
		case comment || strings.HasPrefix(l, "<!--"):
			flush()
			comment = !strings.Contains(l, "-->")
		case l == "" || strings.HasPrefix(l, "|"):
			// A table's rows start with a bar; its lines go with it.
			flush()
		default:
			if h := strings.TrimLeft(l, "#"); h != l && (h == "" || h[0] == ' ') {
				flush()
				l = strings.TrimSpace(h)
				if l == "" {
					continue
				}
			}
			lines = append(lines, l)
		}
	}
	flush()
	return out
}

// cutText cuts p to at most limit bytes: after its last sentence that
// fits, if that keeps at least a third of it, else after its last word.
func cutText(p string, limit int) string {
	const mark = "…"
	if len(p) <= limit {
		return p
	}
	n := limit - len(mark)
	for n > 0 && !utf8.RuneStart(p[n]) {
		n--
	}
	head := p[:n]
	if i := lastSentenceEnd(head); i >= limit/3 {
		return head[:i]
	}
	if i := strings.LastIndexByte(head, ' '); i >= limit/3 {
		head = head[:i]
	}
	return strings.TrimRight(head, " ,;:") + mark
}

// lastSentenceEnd returns the end of the last sentence in s: just after
// a full stop, question or exclamation mark followed by a space or the
// end, or 0.
func lastSentenceEnd(s string) int {
	for i := len(s) - 1; i > 0; i-- {
		if (s[i] == '.' || s[i] == '?' || s[i] == '!') && (i+1 == len(s) || s[i+1] == ' ') {
			return i + 1
		}
	}
	return 0
}
