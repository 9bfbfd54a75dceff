package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// checkPattern says why the regular expression p cannot be given to
// clients in a JSON Schema "pattern", or returns nil. JSON Schema's
// patterns are ECMAScript regular expressions, and clients compile them as
// such: ajv, which the TypeScript MCP SDK uses, with new RegExp(p, "u"),
// and refuses the whole schema over one it cannot compile. toolgate checks
// arguments with Go's regexp, so a pattern must compile there too.
func checkPattern(p string) error {
	if err := ecmaPattern(p); err != nil {
		return fmt.Errorf("not an ECMAScript regular expression (%v)", err)
	}
	if _, err := regexp.Compile(p); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "error parsing regexp") {
			msg = msg[i+2:]
		}
		return fmt.Errorf("an ECMAScript regular expression that Go's cannot check (%s)", msg)
	}
	return nil
}

// ecmaPattern checks p against the grammar of ECMAScript's regular
// expressions in unicode mode (the "u" flag), early errors included, as
// Node.js 20 implements them: no duplicate group names, no modifiers.
// It returns the first error, described as an engine would.
func ecmaPattern(p string) error {
	e := &ecmaParser{src: []rune(p), names: map[string]bool{}}
	if err := e.disjunction(); err != nil {
		return err
	}
	if e.pos < len(e.src) {
		return errors.New("unmatched ')'")
	}
	if e.maxBackref > e.groups {
		return fmt.Errorf("the back reference \\%d names no group", e.maxBackref)
	}
	for _, n := range e.namedRefs {
		if !e.names[n] {
			return fmt.Errorf("the back reference \\k<%s> names no group", n)
		}
	}
	return nil
}

type ecmaParser struct {
	src        []rune
	pos        int
	groups     int             // capturing groups
	names      map[string]bool // group names
	maxBackref int             // the largest \N
	namedRefs  []string        // the names of \k<name>
}

func (e *ecmaParser) eof() bool { return e.pos >= len(e.src) }

func (e *ecmaParser) peek() rune {
	if e.eof() {
		return -1
	}
	return e.src[e.pos]
}

func (e *ecmaParser) peekAt(i int) rune {
	if e.pos+i >= len(e.src) {
		return -1
	}
	return e.src[e.pos+i]
}

func (e *ecmaParser) has(s string) bool {
	for i, r := range []rune(s) {
		if e.peekAt(i) != r {
			return false
		}
	}
	return true
}

func (e *ecmaParser) disjunction() error {
	for {
		for !e.eof() && e.peek() != '|' && e.peek() != ')' {
			if err := e.term(); err != nil {
				return err
			}
		}
		if e.peek() != '|' {
			return nil
		}
		e.pos++
	}
}

// term is an assertion, or an atom and its quantifier.
func (e *ecmaParser) term() error {
	switch c := e.peek(); {
	case c == '^' || c == '$':
		e.pos++
		return e.noQuantifier()
	case c == '\\' && (e.peekAt(1) == 'b' || e.peekAt(1) == 'B'):
		e.pos += 2
		return e.noQuantifier()
	case e.has("(?=") || e.has("(?!") || e.has("(?<=") || e.has("(?<!"):
		e.pos += 3
		if e.src[e.pos-1] == '<' {
			e.pos++
		}
		if err := e.group(); err != nil {
			return err
		}
		// In unicode mode a lookaround cannot be repeated.
		return e.noQuantifier()
	case c == '(':
		e.pos++
		switch {
		case e.has("?:"):
			e.pos += 2
		case e.has("?<"):
			e.pos += 2
			name, err := e.groupName()
			if err != nil {
				return err
			}
			if e.names[name] {
				return fmt.Errorf("duplicate group name %q", name)
			}
			e.names[name] = true
			e.groups++
		case e.peek() == '?':
			return errors.New("invalid group")
		default:
			e.groups++
		}
		if err := e.group(); err != nil {
			return err
		}
	case c == '[':
		e.pos++
		if err := e.class(); err != nil {
			return err
		}
	case c == '\\':
		e.pos++
		if err := e.atomEscape(); err != nil {
			return err
		}
	case c == '*' || c == '+' || c == '?' || c == '{':
		return errors.New("nothing to repeat")
	case c == '}' || c == ']':
		return errors.New("lone quantifier brackets")
	default: // '.' or a pattern character
		e.pos++
	}
	return e.quantifier()
}

// group parses a group's disjunction and its closing parenthesis.
func (e *ecmaParser) group() error {
	if err := e.disjunction(); err != nil {
		return err
	}
	if e.peek() != ')' {
		return errors.New("unterminated group")
	}
	e.pos++
	return nil
}

func (e *ecmaParser) noQuantifier() error {
	switch e.peek() {
	case '*', '+', '?', '{':
		return errors.New("nothing to repeat")
	}
	return nil
}

func (e *ecmaParser) quantifier() error {
	switch e.peek() {
	case '*', '+', '?':
		e.pos++
	case '{':
		e.pos++
		lo, ok := e.digits()
		if !ok {
			return errors.New("incomplete quantifier")
		}
		hi := lo
		if e.peek() == ',' {
			e.pos++
			hi = -1
			if e.peek() != '}' {
				if hi, ok = e.digits(); !ok {
					return errors.New("incomplete quantifier")
				}
			}
		}
		if e.peek() != '}' {
			return errors.New("incomplete quantifier")
		}
		e.pos++
		if hi >= 0 && lo > hi {
			return errors.New("numbers out of order in {} quantifier")
		}
	default:
		return nil
	}
	if e.peek() == '?' {
		e.pos++
	}
	return e.noQuantifier()
}

// digits reads a decimal number; values past the int range saturate.
func (e *ecmaParser) digits() (int, bool) {
	start, n := e.pos, 0
	for isDigit(e.peek()) {
		n = min(n*10+int(e.peek()-'0'), 1<<31)
		e.pos++
	}
	return n, e.pos > start
}

// atomEscape parses what follows a backslash outside a class.
func (e *ecmaParser) atomEscape() error {
	c := e.peek()
	switch {
	case c >= '1' && c <= '9':
		n, _ := e.digits()
		e.maxBackref = max(e.maxBackref, n)
		return nil
	case c == 'k':
		e.pos++
		if e.peek() != '<' {
			return errors.New("invalid named reference")
		}
		e.pos++
		name, err := e.groupName()
		if err != nil {
			return err
		}
		e.namedRefs = append(e.namedRefs, name)
		return nil
	}
	_, _, err := e.characterEscape(false)
	return err
}

// characterEscape parses a character or class escape after its
// backslash. It returns the character, or set for a class escape.
func (e *ecmaParser) characterEscape(inClass bool) (r rune, set bool, err error) {
	if e.eof() {
		return 0, false, errors.New("\\ at end of pattern")
	}
	c := e.peek()
	e.pos++
	switch c {
	case 'd', 'D', 's', 'S', 'w', 'W':
		return 0, true, nil
	case 'p', 'P':
		return 0, true, e.property()
	case 'f':
		return '\f', false, nil
	case 'n':
		return '\n', false, nil
	case 'r':
		return '\r', false, nil
	case 't':
		return '\t', false, nil
	case 'v':
		return '\v', false, nil
	case 'c':
		if l := e.peek(); l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z' {
			e.pos++
			return l % 32, false, nil
		}
		return 0, false, errors.New("invalid unicode escape")
	case '0':
		if isDigit(e.peek()) {
			return 0, false, errors.New("invalid decimal escape")
		}
		return 0, false, nil
	case 'x':
		h, ok := e.hex(2)
		if !ok {
			return 0, false, errors.New("invalid escape")
		}
		return h, false, nil
	case 'u':
		r, err := e.unicodeEscape()
		return r, false, err
	case '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/':
		return c, false, nil
	case '-', 'b':
		if inClass {
			if c == 'b' {
				return '\b', false, nil
			}
			return c, false, nil
		}
	}
	if inClass {
		return 0, false, errors.New("invalid class escape")
	}
	return 0, false, errors.New("invalid escape")
}

// unicodeEscape parses \uXXXX (a surrogate pair of them making one code
// point) or \u{X...} after the u.
func (e *ecmaParser) unicodeEscape() (rune, error) {
	if e.peek() == '{' {
		e.pos++
		start, v := e.pos, rune(0)
		for isHex(e.peek()) {
			v = min(v*16+hexValue(e.peek()), unicode.MaxRune+1)
			e.pos++
		}
		if e.pos == start || e.peek() != '}' || v > unicode.MaxRune {
			return 0, errors.New("invalid unicode escape")
		}
		e.pos++
		return v, nil
	}
	v, ok := e.hex(4)
	if !ok {
		return 0, errors.New("invalid unicode escape")
	}
	if v >= 0xD800 && v <= 0xDBFF && e.has("\\u") {
		save := e.pos
		e.pos += 2
		if lo, ok := e.hex(4); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return (v-0xD800)<<10 + (lo - 0xDC00) + 0x10000, nil
		}
		e.pos = save
	}
	return v, nil
}

func (e *ecmaParser) hex(n int) (rune, bool) {
	v := rune(0)
	for i := range n {
		c := e.peekAt(i)
		if !isHex(c) {
			return 0, false
		}
		v = v*16 + hexValue(c)
	}
	e.pos += n
	return v, true
}

// property parses {Name} or {Name=Value} after \p or \P.
func (e *ecmaParser) property() error {
	if e.peek() != '{' {
		return errors.New("invalid property name")
	}
	end := e.pos + 1
	for end < len(e.src) && e.src[end] != '}' {
		end++
	}
	if end == len(e.src) {
		return errors.New("invalid property name")
	}
	body := string(e.src[e.pos+1 : end])
	e.pos = end + 1
	name, value, hasValue := strings.Cut(body, "=")
	switch {
	case !hasValue && (generalCategories[name] || binaryProperties[name]):
		return nil
	case hasValue && (name == "General_Category" || name == "gc") && generalCategories[value]:
		return nil
	case hasValue && (name == "Script" || name == "sc" || name == "Script_Extensions" || name == "scx") && unicode.Scripts[value] != nil:
		return nil
	}
	return fmt.Errorf("invalid property name %q", body)
}

// groupName parses a group's name and its closing '>'.
func (e *ecmaParser) groupName() (string, error) {
	var name []rune
	for {
		c := e.peek()
		if c == '>' && len(name) > 0 {
			e.pos++
			return string(name), nil
		}
		if c == -1 {
			return "", errors.New("invalid capture group name")
		}
		e.pos++
		if c == '\\' {
			if e.peek() != 'u' {
				return "", errors.New("invalid capture group name")
			}
			e.pos++
			var err error
			if c, err = e.unicodeEscape(); err != nil {
				return "", errors.New("invalid capture group name")
			}
		}
		if !identifierChar(c, len(name) == 0) {
			return "", errors.New("invalid capture group name")
		}
		name = append(name, c)
	}
}

// class parses a character class after its '['.
func (e *ecmaParser) class() error {
	if e.peek() == '^' {
		e.pos++
	}
	for {
		if e.eof() {
			return errors.New("unterminated character class")
		}
		if e.peek() == ']' {
			e.pos++
			return nil
		}
		lo, loSet, err := e.classAtom()
		if err != nil {
			return err
		}
		if e.peek() != '-' || e.peekAt(1) == ']' || e.peekAt(1) == -1 {
			continue
		}
		e.pos++ // a range
		hi, hiSet, err := e.classAtom()
		if err != nil {
			return err
		}
		if loSet || hiSet {
			return errors.New("invalid character class")
		}
		if lo > hi {
			return errors.New("range out of order in character class")
		}
	}
}

func (e *ecmaParser) classAtom() (rune, bool, error) {
	c := e.peek()
	e.pos++
	if c != '\\' {
		return c, false, nil
	}
	return e.characterEscape(true)
}

// identifierChar says whether c may start (first) or continue an
// ECMAScript identifier: ID_Start or ID_Continue, and $, _, ZWNJ, ZWJ.
func identifierChar(c rune, first bool) bool {
	if c == '$' || c == '_' || !first && (c == '\u200c' || c == '\u200d') {
		return true
	}
	if unicode.In(c, unicode.Pattern_Syntax, unicode.Pattern_White_Space) {
		return false
	}
	if unicode.In(c, unicode.L, unicode.Nl, unicode.Other_ID_Start) {
		return true
	}
	return !first && unicode.In(c, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue)
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

func isHex(c rune) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexValue(c rune) rune {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// generalCategories are the names and aliases of the General_Category
// values that ECMAScript's \p{...} accepts.
var generalCategories = setOf(`Cased_Letter LC Close_Punctuation Pe Connector_Punctuation Pc Control Cc cntrl
	Currency_Symbol Sc Dash_Punctuation Pd Decimal_Number Nd digit Enclosing_Mark Me Final_Punctuation Pf
	Format Cf Initial_Punctuation Pi Letter L Letter_Number Nl Line_Separator Zl Lowercase_Letter Ll
	Mark M Combining_Mark Math_Symbol Sm Modifier_Letter Lm Modifier_Symbol Sk Nonspacing_Mark Mn Number N
	Open_Punctuation Ps Other C Other_Letter Lo Other_Number No Other_Punctuation Po Other_Symbol So
	Paragraph_Separator Zp Private_Use Co Punctuation P punct Separator Z Space_Separator Zs Spacing_Mark Mc
	Surrogate Cs Symbol S Titlecase_Letter Lt Unassigned Cn Uppercase_Letter Lu`)

// binaryProperties are the names and aliases of the binary properties
// that ECMAScript's \p{...} accepts.
var binaryProperties = setOf(`ASCII ASCII_Hex_Digit AHex Alphabetic Alpha Any Assigned Bidi_Control Bidi_C
	Bidi_Mirrored Bidi_M Case_Ignorable CI Cased Changes_When_Casefolded CWCF Changes_When_Casemapped CWCM
	Changes_When_Lowercased CWL Changes_When_NFKC_Casefolded CWKCF Changes_When_Titlecased CWT
	Changes_When_Uppercased CWU Dash Default_Ignorable_Code_Point DI Deprecated Dep Diacritic Dia Emoji
	Emoji_Component EComp Emoji_Modifier EMod Emoji_Modifier_Base EBase Emoji_Presentation EPres
	Extended_Pictographic ExtPict Extender Ext Grapheme_Base Gr_Base Grapheme_Extend Gr_Ext Hex_Digit Hex
	IDS_Binary_Operator IDSB IDS_Trinary_Operator IDST ID_Continue IDC ID_Start IDS Ideographic Ideo
	Join_Control Join_C Logical_Order_Exception LOE Lowercase Lower Math Noncharacter_Code_Point NChar
	Pattern_Syntax Pat_Syn Pattern_White_Space Pat_WS Quotation_Mark QMark Radical Regional_Indicator RI
	Sentence_Terminal STerm Soft_Dotted SD Terminal_Punctuation Term Unified_Ideograph UIdeo Uppercase Upper
	Variation_Selector VS White_Space space XID_Continue XIDC XID_Start XIDS`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
