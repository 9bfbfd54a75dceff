package toolgate

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// invalidArguments tells the agent why the arguments of tool do not fit
// its input schema: which argument (its path, such as body.quantity), what
// is wrong with it, and what is allowed, with numbers written as in the
// document. The validator's own report, err, is used, tidied, only when the
// problem cannot be found again.
func invalidArguments(tool string, rs *jsonschema.Resolved, args map[string]any, err error) string {
	var what string
	if rs != nil {
		if p := check(rs.Schema(), args, ""); p != nil {
			what = p.String()
		}
	}
	if what == "" {
		what = validatorWords(err)
	}
	return fmt.Sprintf("The arguments do not fit %s's input schema: %s. Nothing was sent.", tool, what)
}

// problem is what is wrong with one value of the arguments.
type problem struct {
	path string // body.quantity, items[2]; "" for the arguments themselves
	text string // what is wrong and what is allowed: "is 999; it must be at most 10"
}

func (p *problem) String() string {
	if p.path == "" {
		return "the arguments " + p.text
	}
	return p.path + " " + p.text
}

func at(path, format string, args ...any) *problem {
	return &problem{path: path, text: fmt.Sprintf(format, args...)}
}

// check finds the first problem of v against s. It knows the keywords
// toolgate's input schemas use; anything else is left to the validator.
func check(s *jsonschema.Schema, v any, path string) *problem {
	if s == nil {
		return nil
	}
	if isFalse(s) {
		return at(path, "is not allowed here")
	}
	if types := schemaTypes(s); len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
		return at(path, "is %s; it must be %s", show(v), typeWords(types))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameJSON(e, v) }) {
		return at(path, "is %s; it must be %s", show(v), choices(s.Enum))
	}
	if s.Const != nil && !sameJSON(*s.Const, v) {
		return at(path, "is %s; it must be %s", show(v), show(*s.Const))
	}
	var p *problem
	switch x := v.(type) {
	case float64:
		p = checkNumber(s, x, path)
	case string:
		p = checkString(s, x, path)
	case []any:
		p = checkArray(s, x, path)
	case map[string]any:
		p = checkObject(s, x, path)
	}
	if p != nil {
		return p
	}
	return checkCombined(s, v, path)
}

// checkCombined checks allOf, anyOf, oneOf, not and if/then/else.
func checkCombined(s *jsonschema.Schema, v any, path string) *problem {
	for _, sub := range s.AllOf {
		if p := check(sub, v, path); p != nil {
			return p
		}
	}
	if len(s.AnyOf) > 0 {
		if p := checkAlternatives(s.AnyOf, v, path); p != nil {
			return p
		}
	}
	if len(s.OneOf) > 0 {
		if p := checkAlternatives(s.OneOf, v, path); p != nil {
			return p
		}
		matching := 0
		for _, sub := range s.OneOf {
			if check(sub, v, path) == nil {
				matching++
			}
		}
		if matching > 1 {
			return at(path, "is %s, which fits more than one of the forms it may take; it must fit exactly one", show(v))
		}
	}
	if s.Not != nil && check(s.Not, v, path) == nil {
		return at(path, "is %s, which is not allowed here", show(v))
	}
	if s.If != nil {
		if check(s.If, v, path) == nil {
			return check(s.Then, v, path)
		}
		return check(s.Else, v, path)
	}
	return nil
}

// checkAlternatives reports v fitting none of alternatives. When every
// alternative wants another type, it says which types; otherwise it gives
// the problem of the alternative that v came closest to fitting (the one
// whose problem lies deepest).
func checkAlternatives(alternatives []*jsonschema.Schema, v any, path string) *problem {
	var best *problem
	var types []string
	onlyTypes := true
	for _, sub := range alternatives {
		p := check(sub, v, path)
		if p == nil {
			return nil
		}
		if t := schemaTypes(sub); len(t) > 0 && !slices.ContainsFunc(t, func(t string) bool { return hasType(v, t) }) {
			types = append(types, t...)
		} else {
			onlyTypes = false
		}
		if best == nil || len(p.path) > len(best.path) {
			best = p
		}
	}
	if onlyTypes {
		return at(path, "is %s; it must be %s", show(v), typeWords(types))
	}
	return best
}

func checkNumber(s *jsonschema.Schema, x float64, path string) *problem {
	switch {
	case s.Minimum != nil && x < *s.Minimum:
		return at(path, "is %s; it must be at least %s", number(x), number(*s.Minimum))
	case s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum:
		return at(path, "is %s; it must be more than %s", number(x), number(*s.ExclusiveMinimum))
	case s.Maximum != nil && x > *s.Maximum:
		return at(path, "is %s; it must be at most %s", number(x), number(*s.Maximum))
	case s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum:
		return at(path, "is %s; it must be less than %s", number(x), number(*s.ExclusiveMaximum))
	case s.MultipleOf != nil && *s.MultipleOf > 0 && !multipleOf(x, *s.MultipleOf):
		return at(path, "is %s; it must be a multiple of %s", number(x), number(*s.MultipleOf))
	}
	return nil
}

func checkString(s *jsonschema.Schema, x string, path string) *problem {
	n := utf8.RuneCountInString(x)
	switch {
	case s.MinLength != nil && n < *s.MinLength:
		return at(path, "is %s, %s long; it must be at least %s long", show(x), plural(n, "character"), plural(*s.MinLength, "character"))
	case s.MaxLength != nil && n > *s.MaxLength:
		return at(path, "is %s long; it must be at most %s long", plural(n, "character"), plural(*s.MaxLength, "character"))
	case s.Pattern != "":
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
			return at(path, "is %s; it must match the pattern %s", show(x), s.Pattern)
		}
	}
	return nil
}

func checkArray(s *jsonschema.Schema, x []any, path string) *problem {
	switch {
	case s.MinItems != nil && len(x) < *s.MinItems:
		return at(path, "has %s; it must have at least %d", plural(len(x), "item"), *s.MinItems)
	case s.MaxItems != nil && len(x) > *s.MaxItems:
		return at(path, "has %s; it must have at most %d", plural(len(x), "item"), *s.MaxItems)
	}
	if s.UniqueItems {
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				if sameJSON(x[i], x[j]) {
					return at(path, "has the same item twice (items %d and %d); its items must all differ", i, j)
				}
			}
		}
	}
	for i, e := range x {
		sub := s.Items
		if i < len(s.PrefixItems) {
			sub = s.PrefixItems[i]
		} else if i < len(s.ItemsArray) {
			sub = s.ItemsArray[i]
		}
		if p := check(sub, e, fmt.Sprintf("%s[%d]", path, i)); p != nil {
			return p
		}
	}
	return nil
}

func checkObject(s *jsonschema.Schema, x map[string]any, path string) *problem {
	for _, name := range s.Required {
		if _, ok := x[name]; !ok {
			return at(member(path, name), "is missing; it is required")
		}
	}
	for _, name := range propertyNamesOf(x) {
		for given, needs := range s.DependentRequired {
			if given != name {
				continue
			}
			for _, n := range needs {
				if _, ok := x[n]; !ok {
					return at(member(path, n), "is missing; it is required when %s is given", member(path, name))
				}
			}
		}
	}
	for _, name := range propertyNamesOf(x) {
		if sub, ok := s.Properties[name]; ok {
			if p := check(sub, x[name], member(path, name)); p != nil {
				return p
			}
			continue
		}
		matched := false
		for pattern, sub := range s.PatternProperties {
			if re, err := regexp.Compile(pattern); err == nil && re.MatchString(name) {
				matched = true
				if p := check(sub, x[name], member(path, name)); p != nil {
					return p
				}
			}
		}
		if matched || s.AdditionalProperties == nil {
			continue
		}
		if isFalse(s.AdditionalProperties) {
			return at(member(path, name), "is not allowed: %s", allowedNames(s, path))
		}
		if p := check(s.AdditionalProperties, x[name], member(path, name)); p != nil {
			return p
		}
	}
	has := "has"
	if path == "" {
		has = "have" // the arguments have
	}
	switch n := len(x); {
	case s.MinProperties != nil && n < *s.MinProperties:
		return at(path, "%s %s; there must be at least %d", has, plural(n, "property"), *s.MinProperties)
	case s.MaxProperties != nil && n > *s.MaxProperties:
		return at(path, "%s %s; there must be at most %d", has, plural(n, "property"), *s.MaxProperties)
	}
	return nil
}

// allowedNames says which names an object with no others allowed takes.
func allowedNames(s *jsonschema.Schema, path string) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	whose := "its properties are "
	if path == "" {
		whose = "the tool's arguments are "
	}
	switch {
	case len(names) == 0 && path == "":
		return "the tool takes no arguments"
	case len(names) == 0:
		return path + " takes no properties"
	case len(names) > 20:
		return whose + list(names[:20], "and") + fmt.Sprintf(" and %d more", len(names)-20)
	}
	return whose + list(names, "and")
}

// member is the path of a property: body.quantity, or body["a b"] for a
// name that is not a plain word.
func member(path, name string) string {
	if !plainName.MatchString(name) {
		return path + "[" + strconv.Quote(name) + "]"
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

var plainName = regexp.MustCompile(`^[A-Za-z_$@][A-Za-z0-9_$@-]*$`)

func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func hasType(v any, t string) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || t == "integer" && x == math.Trunc(x) && !math.IsInf(x, 0)
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

var typeNames = map[string]string{"string": "a string", "number": "a number", "integer": "a whole number",
	"boolean": "true or false", "object": "an object", "array": "a list", "null": "null"}

func typeWords(types []string) string {
	var words []string
	for _, t := range types {
		w := typeNames[t]
		if w == "" {
			w = t
		}
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return list(words, "or")
}

// show writes a value as the agent wrote it: numbers as numbers, strings
// quoted (and shortened), objects and lists by what they are.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return number(x)
	case string:
		if utf8.RuneCountInString(x) > 60 {
			r := []rune(x)
			x = string(r[:57]) + "..."
		}
		return strconv.Quote(x)
	case []any:
		return "a list of " + plural(len(x), "item")
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

// number writes a number as JSON does: 10, not 10.000000; 0.5, not 1/2.
func number(f float64) string {
	if math.Abs(f) >= 1e21 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// multipleOf compares in decimal, as the numbers were written: 0.3 is a
// multiple of 0.1.
func multipleOf(x, m float64) bool {
	rx, ok1 := new(big.Rat).SetString(number(x))
	rm, ok2 := new(big.Rat).SetString(number(m))
	if !ok1 || !ok2 {
		return true // leave it to the validator
	}
	return new(big.Rat).Quo(rx, rm).IsInt()
}

// choices lists the values an enum allows.
func choices(values []any) string {
	if len(values) == 1 {
		return show(values[0])
	}
	// Every value, up to maxChoicesText: a listed schema may count a long
	// enum rather than list it, and the refusal is where the agent
	// learns its values.
	shown := make([]string, 0, len(values))
	size := 0
	for _, v := range values {
		s := show(v)
		if str, ok := v.(string); ok && len(str) <= 200 {
			s = strconv.Quote(str) // whole: the agent needs the exact value
		}
		if size += len(s) + 2; size > maxChoicesText {
			break
		}
		shown = append(shown, s)
	}
	if n := len(values) - len(shown); n > 0 {
		return "one of " + strings.Join(shown, ", ") + fmt.Sprintf(" (or one of %d more)", n)
	}
	return "one of " + list(shown, "or")
}

// maxChoicesText bounds the values a refusal lists, in bytes.
const maxChoicesText = 16 << 10

func sameJSON(a, b any) bool {
	// Decoded JSON compares deeply; numbers are all float64.
	return reflect.DeepEqual(a, b)
}

func isFalse(s *jsonschema.Schema) bool {
	// jsonschema decodes the schema false as {"not": {}}.
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(noun, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// list joins words as a sentence does: "a, b and c", "a or b".
func list(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

func propertyNamesOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	validating = regexp.MustCompile(`validating [^:]*: `)
	rational   = regexp.MustCompile(`(-?\d+)/(\d+)`)
	trailing   = regexp.MustCompile(`(\d+)\.(\d*?)0+\b`)
)

// validatorWords tidies the validator's report when the problem could not
// be found again: no schema locations, numbers as JSON writes them.
func validatorWords(err error) string {
	msg := validating.ReplaceAllString(err.Error(), "")
	msg = rational.ReplaceAllStringFunc(msg, func(r string) string {
		q, ok := new(big.Rat).SetString(r)
		if !ok {
			return r
		}
		f, _ := q.Float64()
		return number(f)
	})
	return trailing.ReplaceAllStringFunc(msg, func(n string) string {
		return strings.TrimSuffix(strings.TrimRight(n, "0"), ".")
	})
}
