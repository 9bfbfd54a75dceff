package toolgate_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// label is one line of labels.tsv.
type label struct {
	doc, method, path, id, want, category, reason string
}

// projectLabels are labels of documents outside the corpus, kept beside
// them in testdata: APIs whose credentials only their answers show, and
// writes that reach a whole organization (testdata/risk/README.md).
const projectLabels = "testdata/risk/labels.tsv"

// readLabels reads the corpus's labels.tsv, then the project's own.
func readLabels(t *testing.T) []label {
	t.Helper()
	return append(readLabelFile(t, testspecs.Labels(t)), readLabelFile(t, projectLabels)...)
}

func readLabelFile(t *testing.T, path string) []label {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []label
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first || len(cols) < 7 {
			continue
		}
		out = append(out, label{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// labelledDocument loads a document of the labels under the default
// configuration: one of testdata's own, or of the corpus; GitHub's comes
// from npm and may be absent.
func labelledDocument(t *testing.T, name string) *toolgate.Catalog {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if _, err := os.Stat(path); err != nil {
		path = ""
	}
	switch {
	case path != "":
	case name == "github.json":
		path = testspecs.GitHub(t)
	default:
		path = testspecs.Corpus(t, name)
	}
	doc, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// labelFigures are one document's results on its labels, and on the whole
// document.
type labelFigures struct {
	doc                         string
	hide, hideExposed           int
	expose, exposeHidden        int
	ops, reads, readsHidden     int
	safeNotRead, review         int
	hideExposedNames, hiddenIDs []string
	// hideSignals are the signals that hid each "hide" operation; shared
	// counts the operations that a signal also seen in another
	// document's "hide" operations hides.
	hideSignals [][]signal
	hideNames   []string
	shared      int
	unshared    []string
}

// signal is one reason's claim and the evidence it quotes, if any.
type signal struct{ claim, evidence string }

// signals splits reasons into signals: `it moves money ("capture" in its
// name)` is the claim "it moves money" with the evidence "capture".
func signals(reasons []string) []signal {
	var out []signal
	for _, r := range reasons {
		if strings.HasSuffix(r, " changes state") || strings.HasSuffix(r, " reads") || strings.Contains(r, "does more than read") ||
			strings.HasPrefix(r, "its name says it changes state") {
			continue // these alone hide nothing
		}
		claim, rest, _ := strings.Cut(r, " (")
		ev := ""
		if _, q, ok := strings.Cut(rest, `"`); ok {
			ev, _, _ = strings.Cut(q, `"`)
		}
		out = append(out, signal{claim, strings.TrimSuffix(strings.ToLower(ev), "s")})
	}
	return out
}

// alike says whether two signals are the same rule on the same evidence,
// a word or one inside the other ("role" and "clusterrolebinding").
func alike(a, b signal) bool {
	if a.claim != b.claim {
		return false
	}
	return a.evidence == b.evidence || a.evidence != "" && b.evidence != "" &&
		(strings.Contains(a.evidence, b.evidence) || strings.Contains(b.evidence, a.evidence))
}

// shareSignals counts, for each document, the "hide" operations hidden by
// at least one signal that also hides a "hide" operation of another
// document: those the engine would still catch had the document been held
// out of the tuning, as far as its vocabulary goes.
func shareSignals(all []labelFigures) {
	for i := range all {
		for k, mine := range all[i].hideSignals {
			found := false
			for j := range all {
				for _, theirs := range all[j].hideSignals {
					for _, a := range mine {
						for _, b := range theirs {
							found = found || j != i && alike(a, b)
						}
					}
				}
			}
			if found {
				all[i].shared++
			} else {
				all[i].unshared = append(all[i].unshared, all[i].hideNames[k])
			}
		}
	}
}

// TestLabelledOperations runs the risk engine and the default exposure
// over the operations of labels.tsv: no "hide" operation may be exposed by
// default, and at most 5 % of the "expose" ones hidden, in each document.
// With -v it prints the figures that docs/risk.md reports.
func TestLabelledOperations(t *testing.T) {
	t.Parallel()
	byDoc := map[string][]label{}
	var docs []string
	for _, l := range readLabels(t) {
		if byDoc[l.doc] == nil {
			docs = append(docs, l.doc)
		}
		byDoc[l.doc] = append(byDoc[l.doc], l)
	}
	var all []labelFigures
	for _, name := range docs {
		t.Run(name, func(t *testing.T) {
			f := labelled(t, name, byDoc[name])
			all = append(all, f)
			for _, n := range f.hideExposedNames {
				t.Errorf("exposed by default, labelled hide: %s", n)
			}
			if f.exposeHidden*100 > f.expose*5 {
				t.Errorf("%d of %d harmless reads hidden (more than 5 %%): %s", f.exposeHidden, f.expose, strings.Join(f.hiddenIDs, "; "))
			}
		})
	}
	shareSignals(all)
	t.Log("\n" + figuresTable(all))
}

func labelled(t *testing.T, name string, labels []label) labelFigures {
	cat := labelledDocument(t, name)
	byRoute := map[string]*toolgate.Tool{}
	f := labelFigures{doc: name}
	for _, tl := range cat.Tools {
		byRoute[tl.Method+" "+tl.Path] = tl
		f.ops++
		if retry.IsSafeMethod(tl.Method) {
			f.reads++
			if !tl.Exposed {
				f.readsHidden++
			}
			if tl.Risk.Class.String() != "read" {
				f.safeNotRead++
			}
		}
		f.review += reviewed(tl)
	}
	for _, l := range labels {
		tl := byRoute[l.method+" "+l.path]
		if tl == nil {
			t.Errorf("labels.tsv: %s %s is not in %s", l.method, l.path, name)
			continue
		}
		why := fmt.Sprintf("%s (%s %s): %s %v; %s", tl.Name, l.method, l.path, tl.Risk.Class, tl.Risk.Reasons, tl.Exposure)
		switch l.want {
		case "hide":
			f.hide++
			if !tl.Exposed {
				f.hideSignals = append(f.hideSignals, signals(tl.Risk.Reasons))
				f.hideNames = append(f.hideNames, tl.Name)
			}
			if tl.Exposed {
				f.hideExposed++
				f.hideExposedNames = append(f.hideExposedNames, why+" — labelled: "+l.reason)
			}
		case "expose":
			f.expose++
			if !tl.Exposed {
				f.exposeHidden++
				f.hiddenIDs = append(f.hiddenIDs, why)
			}
		default:
			t.Errorf("labels.tsv: %s %s: label %q", l.method, l.path, l.want)
		}
	}
	return f
}

func figuresTable(all []labelFigures) string {
	sort.Slice(all, func(i, j int) bool { return all[i].doc < all[j].doc })
	var b strings.Builder
	b.WriteString("| document | hide exposed | expose hidden | hide caught by a signal shared with another document | operations | GET/HEAD/OPTIONS | of them hidden | of them above read | review |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	var tot labelFigures
	for _, f := range all {
		fmt.Fprintf(&b, "| %s | %d of %d | %d of %d | %d of %d | %d | %d | %d | %d | %d |\n", filepath.Base(f.doc), f.hideExposed, f.hide,
			f.exposeHidden, f.expose, f.shared, f.hide-f.hideExposed, f.ops, f.reads, f.readsHidden, f.safeNotRead, f.review)
		tot.shared += f.shared
		tot.hide += f.hide
		tot.hideExposed += f.hideExposed
		tot.expose += f.expose
		tot.exposeHidden += f.exposeHidden
		tot.ops += f.ops
		tot.reads += f.reads
		tot.readsHidden += f.readsHidden
		tot.safeNotRead += f.safeNotRead
		tot.review += f.review
	}
	fmt.Fprintf(&b, "| all | %d of %d | %d of %d | %d of %d | %d | %d | %d | %d | %d |\n", tot.hideExposed, tot.hide, tot.exposeHidden, tot.expose,
		tot.shared, tot.hide-tot.hideExposed, tot.ops, tot.reads, tot.readsHidden, tot.safeNotRead, tot.review)
	for _, f := range all {
		for _, n := range f.hideExposedNames {
			fmt.Fprintf(&b, "hide exposed: %s\n", n)
		}
		for _, n := range f.hiddenIDs {
			fmt.Fprintf(&b, "expose hidden: %s\n", n)
		}
		if len(f.unshared) > 0 {
			fmt.Fprintf(&b, "%s: hidden only by signals no other document shares: %s\n", filepath.Base(f.doc), strings.Join(f.unshared, ", "))
		}
	}
	return b.String()
}

func reviewed(t *toolgate.Tool) int {
	if len(t.Risk.Review) > 0 {
		return 1
	}
	return 0
}
