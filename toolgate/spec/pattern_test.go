package spec

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/internal/testspecs"
)

// ecmaPatterns are regular expressions whose validity in ECMAScript's
// unicode mode is easy to get wrong, with the verdict of new RegExp(p, "u").
var ecmaPatterns = []struct {
	pattern string
	valid   bool
}{
	{`^[a-z0-9]+$`, true},
	{`^\d{3}-\d{4}$`, true},
	{`[\w.-]+@[\w.-]+`, true},
	{`^[A-Za-z0-9.\-_]+$`, true},          // \- is allowed in a class
	{`^[a-z\_]+$`, false},                 // \_ is not a syntax character
	{`\-`, false},                         // \- outside a class
	{`\/`, true},                          // / may be escaped
	{`\:`, false},                         // identity escapes are for syntax characters
	{`\a`, false},                         // no such escape
	{`\e`, false},                         //
	{`\Z`, false},                         // Python's end of string
	{`\z`, false},                         //
	{`\A`, false},                         //
	{`(?i)abc`, false},                    // no inline flags
	{`(?i:abc)`, false},                   // no modifiers in Node.js 20
	{`(?P<name>a)`, false},                // Python's named group
	{`(?<name>a)\k<name>`, true},          //
	{`(?<name>a)\k<other>`, false},        //
	{`\k<name>`, false},                   // \k needs a group in unicode mode
	{`(?<a>x)|(?<a>y)`, false},            // duplicate names: not in Node.js 20
	{`(?<$x_1>a)`, true},                  //
	{`(?<1a>a)`, false},                   //
	{`(a)\1`, true},                       //
	{`(a)\2`, false},                      // more back references than groups
	{`\1(a)`, true},                       // the group may come later
	{`\0`, true},                          //
	{`\01`, false},                        // no octal
	{`[\0]`, true},                        //
	{`[\1]`, false},                       //
	{`a{2,1}`, false},                     // out of order
	{`a{1,2}`, true},                      //
	{`a{,5}`, false},                      // a lone brace
	{`a{`, false},                         //
	{`a}`, false},                         //
	{`]`, false},                          //
	{`{`, false},                          //
	{`a{2}{3}`, false},                    // nothing to repeat
	{`a**`, false},                        //
	{`a*?`, true},                         //
	{`a{2}?`, true},                       //
	{`*a`, false},                         //
	{`^*`, false},                         // an assertion cannot be repeated
	{`\b+`, false},                        //
	{`(?=a)*`, false},                     // nor can a lookahead, in unicode mode
	{`(?=a)b`, true},                      //
	{`(?<=a)b`, true},                     //
	{`(?<!a)b`, true},                     //
	{`(?!a)b`, true},                      //
	{`(`, false},                          //
	{`)`, false},                          //
	{`(a|b`, false},                       //
	{`a|`, true},                          //
	{`|`, true},                           //
	{``, true},                            //
	{`[`, false},                          //
	{`[]`, true},                          //
	{`[^]`, true},                         //
	{`[[]`, true},                         // [ is literal in a class
	{`[a-]`, true},                        //
	{`[-a]`, true},                        //
	{`[a-z-0-9]`, true},                   //
	{`[z-a]`, false},                      //
	{`[\w-a]`, false},                     // a range from a class escape
	{`[a-\d]`, false},                     //
	{`[\w-]`, true},                       //
	{`[\b]`, true},                        // backspace
	{`[\B]`, false},                       //
	{`[\c1]`, false},                      // Annex B only, not in unicode mode
	{`\cA`, true},                         //
	{`\c`, false},                         //
	{`\x4`, false},                        //
	{`\x41`, true},                        //
	{`\u004`, false},                      //
	{`\u0041`, true},                      //
	{`\u{1F600}`, true},                   //
	{`\u{110000}`, false},                 //
	{`\u{}`, false},                       //
	{`[\uD83D\uDE00-\uD83D\uDE4F]`, true}, // a surrogate pair is one code point
	{`\p{L}`, true},                       //
	{`\p{Letter}`, true},                  //
	{`\p{Lu}`, true},                      //
	{`\P{Nd}`, true},                      //
	{`\p{Script=Greek}`, true},            //
	{`\p{sc=Latin}`, true},                //
	{`\p{Greek}`, false},                  // a script needs Script=
	{`\p{Foo}`, false},                    //
	{`\pL`, false},                        // braces are required
	{`\p{ASCII_Hex_Digit}`, true},         //
	{`\p{Emoji}`, true},                   //
	{`[\p{L}-z]`, false},                  //
	{`\`, false},                          //
	{`.`, true},                           //
	{`^\s*$`, true},                       //
	{`(?:a|b)+`, true},                    //
	{`a{99999999999}`, true},              // large counts are fine in ECMAScript
	{`^[^\s@]+@[^\s@]+\.[^\s@]+$`, true},
	{`^(?!\s)[\w\s-]+$`, true},
	{`[^\/]+`, true},
	{`^#?([a-f0-9]{6}|[a-f0-9]{3})$`, true},
	{`日本`, true},
	{`\d+(\.\d{1,2})?`, true},
	{`^[\s\S]*$`, true},
}

func TestECMAScriptPatterns(t *testing.T) {
	t.Parallel()
	for _, c := range ecmaPatterns {
		err := ecmaPattern(c.pattern)
		if (err == nil) != c.valid {
			t.Errorf("ecmaPattern(%q) = %v; want valid %v", c.pattern, err, c.valid)
		}
	}
}

// TestECMAScriptPatternsAgreeWithNode checks the table, and every pattern
// of the corpus, against new RegExp(p, "u") in Node.js: what ajv does
// with a schema's pattern.
func TestECMAScriptPatternsAgreeWithNode(t *testing.T) {
	t.Parallel()
	node := testkit.Require(t, testkit.Node)
	var patterns []string
	for _, c := range ecmaPatterns {
		patterns = append(patterns, c.pattern)
	}
	patterns = append(patterns, corpusPatterns(t)...)
	patterns = append(patterns, randomPatterns(20000)...)
	in, _ := json.Marshal(patterns)
	cmd := exec.Command(node, "-e", `
		const ps = JSON.parse(require('fs').readFileSync(0, 'utf8'));
		console.log(JSON.stringify(ps.map((p) => { try { new RegExp(p, 'u'); return true } catch { return false } })));`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var valid []bool
	if err := json.Unmarshal(out, &valid); err != nil || len(valid) != len(patterns) {
		t.Fatalf("node said %s: %v", out, err)
	}
	for i, p := range patterns {
		if got := ecmaPattern(p) == nil; got != valid[i] {
			t.Errorf("pattern %q: valid %v here, %v in Node.js", p, got, valid[i])
		}
	}
	t.Logf("%d patterns agree with Node.js", len(patterns))
}

// randomPatterns returns n short patterns made of the characters that
// matter to the grammar, always the same ones.
func randomPatterns(n int) []string {
	const alphabet = `a1209\\[](){}?*+,-^$|.<>=!:kpPuxdDbBc{}LN_`
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 1+r.IntN(10))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		out[i] = string(b)
	}
	return out
}

// corpusPatterns returns the values of every "pattern" key in the corpus
// and GitHub's description.
func corpusPatterns(t *testing.T) []string {
	docs := testspecs.CorpusDocuments(t)
	if p := os.Getenv(testspecs.GitHubEnv); p != "" {
		docs = append(docs, p)
	}
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["pattern"].(string); ok {
				seen[p] = true
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, path := range docs {
		d, err := Load(path)
		if err != nil {
			continue
		}
		var v any
		if err := json.Unmarshal(d.rawBytes, &v); err != nil {
			t.Fatal(err)
		}
		walk(v)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// A pattern must also compile with Go's regexp, which checks arguments.
func TestCheckPatternNeedsGoToo(t *testing.T) {
	t.Parallel()
	for p, ok := range map[string]bool{
		`^[a-z]+$`:      true,
		`\u0041`:        false, // ECMAScript only
		`(?=a)b`:        false, // no lookahead in Go
		`(a)\1`:         false, // no back references in Go
		`a{1001}`:       false, // Go's repeat limit
		`^[a-z\_]+$`:    false, // Go only
		`\p{Greek}`:     false,
		`\p{L}+`:        true,
		`(?<n>a)`:       true,
		`^[\w.-]{1,5}$`: true,
	} {
		if err := checkPattern(p); (err == nil) != ok {
			t.Errorf("checkPattern(%q) = %v; want usable %v", p, err, ok)
		}
	}
	if _, err := regexp.Compile(`\p{L}`); err != nil {
		t.Fatal(err)
	}
}

// FuzzECMAPattern checks that no pattern makes the checker panic, and that
// what it lets through compiles with Go's regexp.
func FuzzECMAPattern(f *testing.F) {
	for _, c := range ecmaPatterns {
		f.Add(c.pattern)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkPattern(p) == nil {
			if _, err := regexp.Compile(p); err != nil {
				t.Fatalf("%q passed: %v", p, err)
			}
		}
	})
}
