package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// TestRunTellsTheStory keeps the README's toolgate quick start honest:
// hidden tools are not listed, the lost answer is reported as unknown, the
// repeated call is refused, and the API applied each placement once.
func TestRunTellsTheStory(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "openapi.yaml", ""); err != nil {
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

// TestRunKeepsTheJournal keeps the journal for the console's quick start:
// the lost call is in it, ambiguous.
func TestRunKeepsTheJournal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shop.db")
	var out bytes.Buffer
	if err := run(context.Background(), &out, "openapi.yaml", db); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "toolgate console openapi.yaml --db "+db) {
		t.Errorf("the output does not say where the journal is:\n%s", out.String())
	}
	store, err := sqlstore.Open(context.Background(), db, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ops, err := journal.New(store.JournalStore(), journal.Options{}).List(context.Background(),
		journal.Filter{Kind: toolgate.JournalKind, States: []journal.State{journal.Ambiguous}})
	if err != nil || len(ops) != 1 || ops[0].Evidence["tool"] != "createOrder" {
		t.Fatalf("the kept journal: %+v, %v", ops, err)
	}
	if err := run(context.Background(), &out, "openapi.yaml", db); err == nil || !strings.Contains(err.Error(), "give --db a new file") {
		t.Errorf("a journal that exists: %v", err)
	}
}

// TestConfigLoads checks the example's configuration with the loader
// that serve and the console use.
func TestConfigLoads(t *testing.T) {
	cfg, err := config.Load("toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Load("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Lookup("listOrders").Deadline.String(); got != "10s" || cfg.Upstream.URL != "http://127.0.0.1:8080" || len(cat.Exposed()) != 4 {
		t.Errorf("listOrders' deadline %s, upstream %s, %d tools exposed", got, cfg.Upstream.URL, len(cat.Exposed()))
	}
}

// TestDocsAgentSession: docs/toolgate.md shows the part of the story where
// an answer is lost and the agent's reflex is refused, as the story
// prints it. The time of the call and the journal's key differ from run to
// run: they are written as a fixed time and key.
func TestDocsAgentSession(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, "openapi.yaml", ""); err != nil {
		t.Fatal(err)
	}
	_, part, ok := strings.Cut(out.String(), "Place another; ")
	part, _, ok2 := strings.Cut(part, "\n\nWhat the result told it")
	if !ok || !ok2 {
		t.Fatalf("the story has changed its narration:\n%s", out.String())
	}
	_, part, _ = strings.Cut(part, "\n")
	part = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(part, "2026-12-01T05:20:59Z")
	part = regexp.MustCompile(`toolgate/createOrder/[0-9a-z]+/[0-9a-z]+`).ReplaceAllString(part, "toolgate/createOrder/4c1f0e9d2a7b55e0c3d1a9f2/k3x9q2m7vd")
	doccheck.Transcript(t, "toolgate-agent-session", part)
}
