package testspecs

import (
	"fmt"
	"strings"
)

// Shapes of the nested documents that Nested builds.
const (
	// NestedProperties nests schemas through properties.
	NestedProperties = "properties"
	// NestedAllOf nests schemas through allOf.
	NestedAllOf = "allOf"
	// NestedItems nests schemas through array items.
	NestedItems = "items"
	// RefChain chains components, each referring to the next.
	RefChain = "ref-chain"
	// DeepRefs refers, from many components, to every level of schemas
	// nested through properties, by JSON pointers 61 tokens long at most.
	DeepRefs = "deep-refs"
)

// Shapes lists Nested's shapes.
var Shapes = []string{NestedProperties, NestedAllOf, NestedItems, RefChain, DeepRefs}

// Nested returns an OpenAPI 3.0 document of about size bytes whose
// schemas have the given shape: nested as deep as depth levels of JSON
// allow, in as many components as the size makes, each the body and the
// answer of an operation. It is hostile input of a kind real documents
// are not, which a loader must handle in time linear in its size.
func Nested(shape string, size, depth int) []byte {
	var schemas, paths strings.Builder
	operation := func(path, ref string) {
		if paths.Len() > 0 {
			paths.WriteString(",")
		}
		fmt.Fprintf(&paths, `"/%s":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/%s"}}}},`+
			`"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/%s"}}}}}}}`, path, ref, ref)
	}
	component := func(name, schema string) {
		if schemas.Len() > 0 {
			schemas.WriteString(",")
		}
		fmt.Fprintf(&schemas, "%q:%s", name, schema)
	}
	// The document, the components and the operations take some levels.
	depth -= 8
	switch shape {
	case NestedProperties, NestedAllOf, NestedItems:
		step := map[string]struct {
			open, close string
			levels      int
		}{
			NestedProperties: {`{"type":"object","properties":{"q":{"type":"integer"},"p":`, `}}`, 2},
			NestedAllOf:      {`{"description":"x","allOf":[{"type":"object"},`, `]}`, 2},
			NestedItems:      {`{"type":"array","items":`, `}`, 1},
		}[shape]
		steps := depth / step.levels
		nest := strings.Repeat(step.open, steps) + `{"type":"string"}` + strings.Repeat(step.close, steps)
		for i := 0; i == 0 || schemas.Len()+len(nest) < size; i++ {
			name := fmt.Sprintf("N%d", i)
			component(name, nest)
			operation(name, name)
		}
	case RefChain:
		const link = `{"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#/components/schemas/A%d"}}}`
		k := max(1, size/(len(link)+8))
		for i := range k {
			component(fmt.Sprintf("A%d", i), fmt.Sprintf(link, i+1))
			if i%50 == 0 {
				operation(fmt.Sprintf("a%d", i), fmt.Sprintf("A%d", i))
			}
		}
		component(fmt.Sprintf("A%d", k), `{"type":"string"}`)
	case DeepRefs:
		const steps = 30
		nest := strings.Repeat(`{"type":"object","properties":{"p":`, steps) + `{"type":"string"}` + strings.Repeat(`}}`, steps)
		for g := 0; g == 0 || schemas.Len() < size; g++ {
			base := fmt.Sprintf("D%d", g)
			component(base, nest)
			var props []string
			for i := range steps {
				ref := fmt.Sprintf("%s_%d", base, i)
				component(ref, fmt.Sprintf(`{"$ref":"#/components/schemas/%s%s"}`, base, strings.Repeat("/properties/p", i)))
				props = append(props, fmt.Sprintf(`"r%d":{"$ref":"#/components/schemas/%s"}`, i, ref))
			}
			component(base+"_all", `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`)
			operation(base, base+"_all")
		}
	default:
		panic("testspecs: no nested shape " + shape)
	}
	return fmt.Appendf(nil, `{"openapi":"3.0.3","info":{"title":"nested","version":"1"},"paths":{%s},"components":{"schemas":{%s}}}`,
		paths.String(), schemas.String())
}
