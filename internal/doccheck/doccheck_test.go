package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

const doc = "# A document\n\n<!-- transcript: greeting -->\n```text\n$ hello\nhello, world\n```\n\n" +
	"<!-- example: config -->\n```yaml\na: 1\n```\n\n```text\nunmarked\n```\n"

func TestParseFindsMarkedBlocks(t *testing.T) {
	blocks, err := Parse("doc.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("found %d blocks, want the 2 marked ones: %+v", len(blocks), blocks)
	}
	g, c := blocks[0], blocks[1]
	if g.Mark != "transcript" || g.Name != "greeting" || g.Info != "text" || g.Text != "$ hello\nhello, world\n" || g.Line != 4 {
		t.Errorf("transcript block = %+v", g)
	}
	if c.Mark != "example" || c.Name != "config" || c.Info != "yaml" || c.Text != "a: 1\n" {
		t.Errorf("example block = %+v", c)
	}
}

func TestParseRefusesAMarkWithoutABlock(t *testing.T) {
	for name, text := range map[string]string{
		"no block":     "<!-- transcript: a -->\nplain text\n",
		"at the end":   "<!-- transcript: a -->",
		"never closed": "<!-- example: b -->\n```yaml\na: 1\n",
	} {
		if _, err := Parse("doc.md", []byte(text)); err == nil || !strings.Contains(err.Error(), "doc.md:") {
			t.Errorf("%s: Parse = %v, want an error naming the place", name, err)
		}
	}
}

func TestRewriteReplacesOnlyTheBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, _ := Parse("doc.md", []byte(doc))
	if err := rewrite(path, blocks[0], "$ hello\nhello, you\nand more\n"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := strings.Replace(doc, "hello, world\n", "hello, you\nand more\n", 1)
	if string(data) != want {
		t.Errorf("after rewrite:\n%s\nwant:\n%s", data, want)
	}
	// The block as it was is gone: a second rewrite from it is refused,
	// not applied elsewhere.
	if err := rewrite(path, blocks[0], "x\n"); err == nil {
		t.Error("a rewrite from a block that changed since was applied")
	}
}

// TestEveryBlockIsMarked: each block of output (text), configuration
// (yaml) or data (json) shown in the documents is compared with the
// program or fed to it by some test.
func TestEveryBlockIsMarked(t *testing.T) {
	files, err := Documents()
	if err != nil {
		t.Fatal(err)
	}
	fenceRE := regexp.MustCompile("^\\s*```(text|yaml|json|console)\\s*$")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(f, data); err != nil {
			t.Error(err)
		}
		lines := strings.Split(string(data), "\n")
		inside := false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				if !inside && fenceRE.MatchString(l) {
					checked++
					if i == 0 || !markRE.MatchString(strings.TrimSpace(lines[i-1])) {
						t.Errorf("%s:%d: a %s block with no <!-- transcript: NAME --> or <!-- example: KIND --> mark before it: mark it and check it in a test",
							f, i+1, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```")))
					}
				}
				inside = !inside
			}
		}
	}
	if checked == 0 {
		t.Fatal("no block found in the documents: are they where Documents looks?")
	}
}

// TestREADMEIsOnePage: the README says what the project is, how to install
// it and start each product, and where to read on; the manuals are in docs.
func TestREADMEIsOnePage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it within 250 and move the rest to docs/", n)
	}
	for _, want := range []string{"go install github.com/rubicon-go/rubicon/cmd/...@latest", "## Quick start", "## Where to read on"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}

// TestLinksLead: every relative link of the documents names a file that
// exists, and every #fragment a heading of it.
func TestLinksLead(t *testing.T) {
	files, err := Documents()
	if err != nil {
		t.Fatal(err)
	}
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := filepath.Join(Root(), f)
			if path != "" {
				file = filepath.Join(filepath.Dir(file), path)
			}
			if st, err := os.Stat(file); err == nil && st.IsDir() {
				continue // a folder, which a reader browses
			}
			linked, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: the link %s leads nowhere: %v", f, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(file, ".md") && !slices.Contains(anchors(string(linked)), frag) {
				t.Errorf("%s: the link %s names no heading of %s", f, target, path)
			}
		}
	}
}

// anchors are the fragments GitHub gives a document's headings.
func anchors(doc string) []string {
	var out []string
	inside := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			inside = !inside
		}
		if inside || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
