package toolgate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Each message names the argument by its path, says what is wrong with
// the value as the agent wrote it and what is allowed, with the document's
// numbers as written, and agrees with the validator that something is.
func TestInvalidArgumentsSayWhatAndWhere(t *testing.T) {
	t.Parallel()
	const order = `{"type":"object","additionalProperties":false,"required":["body"],"properties":{
		"body":{"type":"object","required":["sku","quantity"],"additionalProperties":false,"properties":{
			"sku":{"type":"string","pattern":"^[A-Z][0-9]+$","minLength":2,"maxLength":8},
			"quantity":{"type":"integer","minimum":1,"maximum":10},
			"price":{"type":"number","exclusiveMinimum":0,"multipleOf":0.01},
			"colour":{"enum":["red","green","blue"]},
			"note":{"type":["string","null"]},
			"tags":{"type":"array","items":{"type":"string"},"maxItems":2,"uniqueItems":true},
			"lines":{"type":"array","items":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}}},
			"ship":{"anyOf":[{"type":"string","enum":["pickup"]},{"type":"object","required":["street"],"properties":{"street":{"type":"string"}}}]},
			"a b":{"type":"boolean"}}},
		"limit":{"type":"integer","minimum":1,"maximum":100}}}`
	for _, c := range []struct{ args, want string }{
		{`{}`, "body is missing; it is required"},
		{`{"body":{"sku":"A1"}}`, "body.quantity is missing; it is required"},
		{`{"body":{"sku":"A1","quantity":999}}`, "body.quantity is 999; it must be at most 10"},
		{`{"body":{"sku":"A1","quantity":0}}`, "body.quantity is 0; it must be at least 1"},
		{`{"body":{"sku":"A1","quantity":1.5}}`, "body.quantity is 1.5; it must be a whole number"},
		{`{"body":{"sku":"A1","quantity":"two"}}`, `body.quantity is "two"; it must be a whole number`},
		{`{"body":{"sku":"A1","quantity":1,"price":0}}`, "body.price is 0; it must be more than 0"},
		{`{"body":{"sku":"A1","quantity":1,"price":1.005}}`, "body.price is 1.005; it must be a multiple of 0.01"},
		{`{"body":{"sku":"a1","quantity":1}}`, `body.sku is "a1"; it must match the pattern ^[A-Z][0-9]+$`},
		{`{"body":{"sku":"A","quantity":1}}`, `body.sku is "A", 1 character long; it must be at least 2 characters long`},
		{`{"body":{"sku":"A123456789","quantity":1}}`, "body.sku is 10 characters long; it must be at most 8 characters long"},
		{`{"body":{"sku":"A1","quantity":1,"colour":"purple"}}`, `body.colour is "purple"; it must be one of "red", "green" or "blue"`},
		{`{"body":{"sku":"A1","quantity":1,"note":5}}`, "body.note is 5; it must be a string or null"},
		{`{"body":{"sku":"A1","quantity":1,"tags":["x","y","z"]}}`, "body.tags has 3 items; it must have at most 2"},
		{`{"body":{"sku":"A1","quantity":1,"tags":["x","x"]}}`, "body.tags has the same item twice (items 0 and 1); its items must all differ"},
		{`{"body":{"sku":"A1","quantity":1,"tags":["x",7]}}`, "body.tags[1] is 7; it must be a string"},
		{`{"body":{"sku":"A1","quantity":1,"lines":[{"sku":"B2"},{}]}}`, "body.lines[1].sku is missing; it is required"},
		{`{"body":{"sku":"A1","quantity":1,"ship":"drone"}}`, `body.ship is "drone"; it must be "pickup"`},
		{`{"body":{"sku":"A1","quantity":1,"ship":{"street":3}}}`, "body.ship.street is 3; it must be a string"},
		{`{"body":{"sku":"A1","quantity":1,"a b":"yes"}}`, `body["a b"] is "yes"; it must be true or false`},
		{`{"body":{"sku":"A1","quantity":1,"extra":true}}`, `body.extra is not allowed: its properties are a b, colour, lines, note, price, quantity, ship, sku and tags`},
		{`{"body":{"sku":"A1","quantity":1},"host":"evil.example"}`, "host is not allowed: the tool's arguments are body and limit"},
		{`{"body":{"sku":"A1","quantity":1},"limit":1000000}`, "limit is 1000000; it must be at most 100"},
		{`{"body":[1]}`, "body is a list of 1 item; it must be an object"},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		rs := resolve(t, order)
		err := rs.Validate(args)
		if err == nil {
			t.Errorf("%s: the validator accepts it", c.args)
			continue
		}
		got := invalidArguments("createOrder", rs, args, err)
		want := "The arguments do not fit createOrder's input schema: " + c.want + ". Nothing was sent."
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.args, got, want)
		}
	}
}

func resolve(t *testing.T, schema string) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// When the problem cannot be found again, the validator's report is
// given without its schema locations and with numbers as JSON writes
// them.
func TestValidatorWords(t *testing.T) {
	t.Parallel()
	rs := resolve(t, `{"type":"object","properties":{"n":{"$ref":"#/$defs/small"}},"$defs":{"small":{"maximum":10}}}`)
	args := map[string]any{"n": 999.0}
	err := rs.Validate(args)
	if err == nil {
		t.Fatal("the validator accepts 999")
	}
	got := invalidArguments("t", rs, args, err)
	if !strings.Contains(got, "999 is greater than 10") || strings.Contains(got, "/1") || strings.Contains(got, "10.0") || strings.Contains(got, "validating") {
		t.Errorf("got %s (from %v)", got, err)
	}
}
