package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunTellsTheStory keeps the README's toolgate quick start honest:
// hidden tools are not listed, the lost answer is reported as unknown, the
// repeated call is refused, and the API applied each placement once.
func TestRunTellsTheStory(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "openapi.yaml"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	listing, _, _ := strings.Cut(got, "Place an order:")
	for _, hidden := range []string{"deleteOrder", "refundOrder", "listApiKeys"} {
		if strings.Contains(listing, hidden) {
			t.Errorf("tool list shows %s:\n%s", hidden, listing)
		}
	}
	for _, want := range []string{
		"createOrder   readOnly=false destructive=false idempotent=false",
		"OUTCOME UNKNOWN: createOrder may or may not have been applied",
		"read the resource with listOrders",
		"REFUSED: an identical call to createOrder",
		`"sku":"B7"`,
		`unknown tool "deleteOrder"`,
		"The API holds 2 orders from 2 placements sent; the journal keeps 1 call with an unknown outcome",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
