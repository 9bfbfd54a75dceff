package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Setting names one setting of a tag or a tool as the configuration
// writes it, such as tools.createOrder.expose.
type Setting struct {
	// Section is "tags" or "tools".
	Section string
	// Name is the tag's or the tool's name.
	Name string
	// Field is the setting: expose, retry, deadline, and so on.
	Field string
}

// String names the setting as the file's path to it: tools.NAME.FIELD.
func (s Setting) String() string { return s.Section + "." + s.Name + "." + s.Field }

// Edit sets a setting to a value written in YAML ("true", "confirm",
// "[read, write]", "45s"); an empty Value removes the setting.
type Edit struct {
	Setting
	Value string
}

// Written returns the settings of tags and tools as data writes them,
// each value in YAML's flow style on one line ("[read, write]").
func Written(data []byte) (map[Setting]string, error) {
	root, err := rootMapping(data)
	if err != nil || root == nil {
		return map[Setting]string{}, err
	}
	out := map[Setting]string{}
	for _, section := range []string{"tags", "tools"} {
		i := find(root, section)
		if i < 0 {
			continue
		}
		entries := deref(root.Content[i+1])
		if entries.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(entries.Content); j += 2 {
			name, rule := entries.Content[j].Value, deref(entries.Content[j+1])
			if rule.Kind != yaml.MappingNode {
				continue
			}
			for k := 0; k+1 < len(rule.Content); k += 2 {
				text, err := flowText(rule.Content[k+1])
				if err != nil {
					return nil, err
				}
				out[Setting{section, name, rule.Content[k].Value}] = text
			}
		}
	}
	return out, nil
}

// Apply returns data with edits made, one after the other, and every other
// byte as it was: comments, blank lines, order and quoting stay. Only the
// entries of the tags and tools that an edit names are written anew, and
// their comments are kept (but for those on a setting that an edit
// removes). An entry that uses a YAML anchor, alias or merge key is
// refused: a change there could change other entries too.
func Apply(data []byte, edits []Edit) ([]byte, error) {
	for _, e := range edits {
		var err error
		if data, err = apply(data, e); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// apply makes one edit.
func apply(data []byte, e Edit) ([]byte, error) {
	if e.Section != "tags" && e.Section != "tools" {
		return nil, fmt.Errorf("%s: only the settings of tags and tools can be edited here", e.Setting)
	}
	val, err := valueNode(e)
	if err != nil {
		return nil, err
	}
	root, err := rootMapping(data)
	if err != nil {
		return nil, err
	}
	if root == nil || find(root, e.Section) < 0 {
		if val == nil {
			return data, nil
		}
		if root != nil && hasMerge(root) {
			return nil, refuseShared(e.Section)
		}
		return appendSection(data, e, val)
	}
	si := find(root, e.Section)
	sk, sv := root.Content[si], root.Content[si+1]
	if sv.Kind == yaml.MappingNode && sv.Style&yaml.FlowStyle == 0 && len(sv.Content) > 0 {
		return editEntry(data, e, sk, sv, val)
	}
	// An empty section, or one written in flow style, is written anew.
	if shared(sv) {
		return nil, refuseShared(e.Section)
	}
	entries := sv
	if isNull(sv) {
		entries = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", LineComment: sv.LineComment}
	} else if sv.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is %s; give a mapping of names to their settings", e.Section, describe(sv))
	}
	i := find(entries, e.Name)
	var rule *yaml.Node
	if i >= 0 {
		rule = entries.Content[i+1]
	}
	rule, dropped, err := setField(rule, e, val)
	if err != nil {
		return nil, err
	}
	switch {
	case i >= 0 && rule == nil:
		entries.Content = slices.Delete(entries.Content, i, i+2)
	case i >= 0:
		entries.Content[i+1] = rule
	case rule != nil:
		entries.Content = append(entries.Content, strNode(e.Name), rule)
	}
	return splice(data, sk, entries, dropped, e)
}

// editEntry makes edit e in sk's block mapping of names sv: the entry of
// e.Name is written anew, added at the section's end, or removed.
func editEntry(data []byte, e Edit, sk, sv, val *yaml.Node) ([]byte, error) {
	i := find(sv, e.Name)
	if i < 0 {
		if val == nil {
			return data, nil
		}
		if hasMerge(sv) {
			return nil, refuseShared(e.Section)
		}
		rule, _, err := setField(nil, e, val)
		if err != nil {
			return nil, err
		}
		text, err := encodePair(strNode(e.Name), rule, sv.Content[0].Column-1, 2, false)
		if err != nil {
			return nil, err
		}
		lines := splitLines(data)
		end := entryEnd(lines, sk)
		return joinLines(lines[:end], text, lines[end:]), nil
	}
	nk, nv := sv.Content[i], sv.Content[i+1]
	if shared(nk) || shared(nv) {
		return nil, refuseShared(e.Section + "." + e.Name)
	}
	rule, dropped, err := setField(nv, e, val)
	if err != nil {
		return nil, err
	}
	if rule == nil {
		// Nothing is left of the entry: it goes, unless it holds comments,
		// which stay with an empty one.
		if !hasComments(nv) && nk.LineComment == "" {
			lines := splitLines(data)
			return joinLines(lines[:nk.Line-1], nil, lines[entryEnd(lines, nk):]), nil
		}
		rule = nv
		rule.Content, rule.Style = nil, yaml.FlowStyle
	}
	return splice(data, nk, rule, dropped, e)
}

// splice writes the entry of key k anew with value v, in place of the
// lines k's entry takes, keeping every comment of data but those in
// dropped. It tries the entry's comments after its last setting both
// where the text has them and as part of the entry.
func splice(data []byte, k, v *yaml.Node, dropped []string, e Edit) ([]byte, error) {
	lines := splitLines(data)
	start, end := k.Line-1, entryEnd(lines, k)
	want, err := comments(data)
	if err != nil {
		return nil, err
	}
	for _, c := range dropped {
		if i := slices.Index(want, c); i >= 0 {
			want = slices.Delete(want, i, i+1)
		}
	}
	for _, feet := range []bool{false, true} {
		text, err := encodePair(k, v, k.Column-1, indentUnit(k, v), feet)
		if err != nil {
			return nil, err
		}
		out := joinLines(lines[:start], text, lines[end:])
		got, err := comments(out)
		if err != nil || !equalBags(got, want) {
			continue
		}
		// Lines the edit did not change keep their spacing, if that reads
		// the same.
		kept := joinLines(lines[:start], asWritten(text, lines[start:end]), lines[end:])
		if same(kept, out) {
			return kept, nil
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: the comments around %s.%s cannot be kept through this change; make it in the file itself", e.Setting, e.Section, e.Name)
}

// asWritten returns lines with each line that old has too, but for the
// spaces before its comment, as old has it.
func asWritten(lines, old []string) []string {
	written := map[string]string{}
	for _, l := range old {
		written[spacedComment.ReplaceAllString(l, "$1 $2")] = l
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		if w, ok := written[spacedComment.ReplaceAllString(l, "$1 $2")]; ok {
			out[i] = w
		}
	}
	return out
}

// spacedComment is a line that ends with a comment, and the spaces
// before it.
var spacedComment = regexp.MustCompile(`^(.*\S)\s+(#[^'"]*)$`)

// same reports whether a and b say the same, comments included.
func same(a, b []byte) bool {
	var va, vb any
	ca, errA := comments(a)
	cb, errB := comments(b)
	return errA == nil && errB == nil && yaml.Unmarshal(a, &va) == nil && yaml.Unmarshal(b, &vb) == nil &&
		reflect.DeepEqual(va, vb) && slices.Equal(ca, cb)
}

// setField returns rule (a tag's or a tool's settings, nil if it has
// none) with e's field set to val, or removed if val is nil, and the
// comments that went with a removed setting. It returns a nil rule when
// no setting is left.
func setField(rule *yaml.Node, e Edit, val *yaml.Node) (*yaml.Node, []string, error) {
	if rule == nil || isNull(rule) {
		if val == nil {
			return nil, nil, nil
		}
		rule = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	}
	if rule.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s.%s is %s; give a mapping of its settings, such as {expose: true}", e.Section, e.Name, describe(rule))
	}
	if hasMerge(rule) {
		return nil, nil, refuseShared(e.Section + "." + e.Name)
	}
	var dropped []string
	i := find(rule, e.Field)
	switch {
	case i >= 0 && val == nil:
		// Its comments go with it, but for those below it, which the
		// text keeps after the entry.
		k, v := *rule.Content[i], withoutFeet(rule.Content[i+1])
		k.FootComment = ""
		dropped = append(commentLines(&k), nestedComments(v)...)
		rule.Content = slices.Delete(rule.Content, i, i+2)
	case i >= 0:
		old := rule.Content[i+1]
		val.HeadComment, val.LineComment, val.FootComment = old.HeadComment, old.LineComment, old.FootComment
		for _, c := range old.Content {
			dropped = append(dropped, nestedComments(c)...)
		}
		rule.Content[i+1] = val
	case val != nil:
		rule.Content = append(rule.Content, strNode(e.Field), val)
	}
	if len(rule.Content) == 0 {
		return nil, dropped, nil
	}
	return rule, dropped, nil
}

// valueNode parses e's value, or returns nil when it is empty.
func valueNode(e Edit) (*yaml.Node, error) {
	v := strings.TrimSpace(e.Value)
	if v == "" {
		return nil, nil
	}
	if strings.ContainsAny(v, "\r\n") || len(v) > 500 {
		return nil, fmt.Errorf("%s: give its value on one line", e.Setting)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s is %q, which is not a YAML value; write it as in the file, such as true, [read, write] or 45s", e.Setting, v)
	}
	n := doc.Content[0]
	if shared(n) {
		return nil, fmt.Errorf("%s is %q: anchors and aliases cannot be written here", e.Setting, v)
	}
	clean(n)
	return n, nil
}

// clean drops n's comments and writes its collections in flow style.
func clean(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style |= yaml.FlowStyle
	}
	for _, c := range n.Content {
		clean(c)
	}
}

// appendSection adds the section of e, with e's entry, at the end of data.
func appendSection(data []byte, e Edit, val *yaml.Node) ([]byte, error) {
	rule, _, err := setField(nil, e, val)
	if err != nil {
		return nil, err
	}
	entries := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode(e.Name), rule}}
	text, err := encodePair(strNode(e.Section), entries, 0, 2, false)
	if err != nil {
		return nil, err
	}
	lines := splitLines(data)
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return joinLines(lines, text, nil), nil
}

// encodePair writes the mapping entry k: v in YAML, each line indented by
// indent spaces and nested ones by unit more. k's own comments above and
// below it stay where the text has them; so do v's comments after its
// last setting unless feet is true.
func encodePair(k, v *yaml.Node, indent, unit int, feet bool) ([]string, error) {
	key := *k
	key.HeadComment, key.FootComment = "", ""
	if !feet {
		v = withoutFeet(v)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(unit)
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{&key, v}}
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	pad := strings.Repeat(" ", indent)
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return lines, nil
}

// withoutFeet returns a copy of n without foot comments.
func withoutFeet(n *yaml.Node) *yaml.Node {
	c := *n
	c.FootComment = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = withoutFeet(child)
	}
	return &c
}

// entryEnd returns the number of the last line of the mapping entry whose
// key is k (1-based): the key's line and the lines after it that are
// indented deeper, but for the blank and comment lines at its end.
func entryEnd(lines []string, k *yaml.Node) int {
	indent, end := k.Column-1, k.Line
	for l := k.Line + 1; l <= len(lines); l++ {
		s := lines[l-1]
		t := strings.TrimLeft(s, " ")
		switch {
		case strings.TrimSpace(t) == "":
			continue
		case len(s)-len(t) <= indent:
			return end
		case strings.HasPrefix(t, "#"):
			continue
		}
		end = l
	}
	return end
}

// indentUnit is how many spaces the text indents v's entries by more
// than their key k; 2 when v is new or not a block mapping.
func indentUnit(k, v *yaml.Node) int {
	if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Content[0].Column > k.Column && k.Column > 0 {
		return v.Content[0].Column - k.Column
	}
	return 2
}

// rootMapping parses data and returns its top-level mapping, or nil for
// an empty document.
func rootMapping(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, &Error{Line: root.Line, Msg: "the configuration is not written as a block mapping (one setting per line), which is how it can be edited here"}
	}
	return root, nil
}

// find returns the index in mapping m of the key named name, or -1.
func find(m *yaml.Node, name string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == name && k.Tag != "!!merge" {
			return i
		}
	}
	return -1
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// shared reports whether n, or a node under it, is an anchor, an alias or
// a merge key, which other entries may share.
func shared(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode || n.Tag == "!!merge" {
		return true
	}
	return slices.ContainsFunc(n.Content, shared)
}

func hasMerge(m *yaml.Node) bool {
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Tag == "!!merge" {
			return true
		}
	}
	return false
}

func refuseShared(what string) error {
	return fmt.Errorf("%s uses a YAML anchor, alias or merge key (&, *, <<), which other entries may share; change it in the file itself", what)
}

// flowText writes n on one line, in flow style, without comments.
func flowText(n *yaml.Node) (string, error) {
	c := copyNode(deref(n))
	clean(c)
	out, err := yaml.Marshal(c)
	return strings.TrimSpace(string(out)), err
}

func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = copyNode(deref(child))
	}
	return &c
}

// comments returns every comment line of data, in order.
func comments(data []byte) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	return nestedComments(&doc), nil
}

// nestedComments returns the comment lines of n and the nodes under it.
func nestedComments(n *yaml.Node) []string {
	out := commentLines(n)
	for _, c := range n.Content {
		out = append(out, nestedComments(c)...)
	}
	return out
}

// commentLines returns n's own comment lines.
func commentLines(n *yaml.Node) []string {
	var out []string
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		for l := range strings.SplitSeq(c, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

func hasComments(n *yaml.Node) bool { return len(nestedComments(n)) > 0 }

// equalBags reports whether a and b hold the same lines, in any order.
func equalBags(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// splitLines splits data into lines without their ends; a last line
// without an end counts.
func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// join writes before, mid and after as lines, each ended by "\n".
func joinLines(before, mid, after []string) []byte {
	var b bytes.Buffer
	for _, part := range [][]string{before, mid, after} {
		for _, l := range part {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// WriteFile replaces the file at path with data atomically: data goes to
// a new file in the same directory, which is synced to disk and then
// renamed over path, so that a reader sees the old file or the new one,
// never a part. The file keeps its permissions (a new one gets 0644); a
// symbolic link is followed, and the file it points to is replaced.
func WriteFile(path string, data []byte) (err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = info.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write the configuration %s: %s", path, readProblem(err))
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write the configuration %s: %s", path, readProblem(err))
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("cannot write the configuration %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("cannot write the configuration %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("cannot write the configuration %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("cannot write the configuration %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("cannot write the configuration %s: %w", path, err)
	}
	// The rename is durable once the directory is.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
