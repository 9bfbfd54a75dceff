package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/journal"
)

// listCases are the cases of listing operations by filter: kind, subject
// prefix, state, limit and keys.
func listCases() []testCase {
	return []testCase{
		{name: "ListFilters", run: listFilters},
		{name: "ListByKeys", run: listByKeys},
	}
}

// listFilters: operations are listed by kind, subject prefix (its % and _ taken
// literally) and state, oldest first, up to a limit.
func listFilters(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "a_1", journal.Applied)
	e.into(t, "a%2", journal.Ambiguous)
	e.into(t, "b-1", journal.Pending)
	ops, err := e.j.List(e.ctx, journal.Filter{Kind: "charge", SubjectPrefix: "batch/a%", States: []journal.State{journal.Ambiguous, journal.Applied}})
	if err != nil || len(ops) != 1 || ops[0].Key != "a%2" {
		t.Fatalf("list by literal prefix batch/a%%: %+v, %v", ops, err)
	}
	ops, _ = e.j.List(e.ctx, journal.Filter{Limit: 2})
	if len(ops) != 2 {
		t.Fatalf("limit 2 gave %d", len(ops))
	}
}

// listByKeys: a filter by keys selects exactly the operations with those
// keys, however many keys it names, with the other fields narrowing it, and
// a safe retry's scope narrows the same way.
func listByKeys(t *testing.T, h Harness) {
	e := open(t, h)
	odd := []string{"k%1", "k_2", "k'3", "ké 4 日本"}
	for _, k := range odd {
		e.into(t, k, journal.FailedSafe)
	}
	e.into(t, "k-ambiguous", journal.Ambiguous)
	keys := func(ops []journal.Operation) string {
		var out []string
		for _, op := range ops {
			out = append(out, op.Key)
		}
		return strings.Join(out, ",")
	}
	// Thousands of keys, most without an operation: a store that binds a
	// parameter per key meets its backend's limit.
	many := []string{"k'3", "k-ambiguous", "k%1"}
	for i := range 5000 {
		many = append(many, fmt.Sprintf("missing-%d", i))
	}
	ops, err := e.j.List(e.ctx, journal.Filter{Keys: many})
	if err != nil || keys(ops) != "k%1,k'3,k-ambiguous" {
		t.Fatalf("list by 5003 keys, 3 of them stored: %q, %v; want k%%1,k'3,k-ambiguous, oldest first", keys(ops), err)
	}
	ops, err = e.j.List(e.ctx, journal.Filter{Keys: many, States: []journal.State{journal.Ambiguous}})
	if err != nil || keys(ops) != "k-ambiguous" {
		t.Fatalf("list by keys and state: %q, %v", keys(ops), err)
	}
	if ops, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"k_2", "ké 4 日本"}, Kind: "refund"}); err != nil || len(ops) != 0 {
		t.Fatalf("list by keys of another kind: %q, %v", keys(ops), err)
	}
	if ops, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"ké 4 日本", "k_2"}}); err != nil || keys(ops) != "k_2,ké 4 日本" {
		t.Fatalf("list by keys with _ and non-ASCII letters: %q, %v", keys(ops), err)
	}
	if _, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"ok", " "}}); !errors.Is(err, journal.ErrInvalid) {
		t.Fatalf("list by a blank key: %v; want ErrInvalid", err)
	}
	rep, err := e.j.RetrySafe(e.ctx, journal.Scope{Keys: []string{"k_2", "k-ambiguous", "missing"}, By: "ana"})
	if err != nil || strings.Join(rep.Moved, ",") != "k_2" || len(rep.Left) != 1 || rep.Left[0].Key != "k-ambiguous" {
		t.Fatalf("a safe retry of keys: %+v, %v; want k_2 moved and k-ambiguous left", rep, err)
	}
	if op, _ := e.j.Get(e.ctx, "k%1"); op.State != journal.FailedSafe {
		t.Fatalf("an operation outside the keys moved to %s", op.State)
	}
}
