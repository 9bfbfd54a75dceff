package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
)

func needsCorrupt(h Harness) string {
	if h.Corrupt == nil {
		return "Corrupt"
	}
	return ""
}

// limitCases are the values at and past the documented limits: every
// store keeps the same values, and refuses, or never sees, the same ones.
func limitCases() []testCase {
	return []testCase{
		{name: "SettlementPastTheLargestAmountIsRefused", run: settlementOverflow},
		{name: "StoreRefusesAnOverflowingMove", needs: needsUpdate, run: storeOverflow},
		{name: "EvidenceNumbersReadBackExactly", run: exactNumbers},
		{name: "InvalidTextNeverReachesTheStore", run: invalidText},
		{name: "ReportDetailIsMadeStorable", run: storableDetail},
		{name: "ValuesAtTheLimitsRoundTrip", run: valuesAtTheLimits},
		{name: "DamagedRowDoesNotHideTheRest", needs: needsCorrupt, run: damagedRow},
		{name: "EvidenceMergesKeyByKey", run: evidenceMerge},
	}
}

// evidenceMerge: reported evidence replaces the stored keys it names, whole,
// and keeps the others, whatever the values (a store that merges in one
// step, as journal.Mover allows, must agree with the journal's merge).
func evidenceMerge(t *testing.T, h Harness) {
	e := open(t, h)
	for _, tt := range []struct {
		key            string
		stored, report journal.Evidence
		want           string
	}{
		{"scalars", journal.Evidence{"a": 1, "list": []any{0}, "keep": true},
			journal.Evidence{"a": "s", "list": []any{1, 2}, "new": 7},
			`{"a":"s","keep":true,"list":[1,2],"new":7}`},
		{"objects and null", journal.Evidence{"a": 1, "obj": map[string]any{"x": 1, "y": 2}, "keep": "k"},
			journal.Evidence{"a": 2, "obj": map[string]any{"z": 3}, "n": nil},
			`{"a":2,"keep":"k","n":null,"obj":{"z":3}}`},
	} {
		if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: tt.key, Kind: "charge", Evidence: tt.stored}); err != nil {
			t.Fatal(err)
		}
		e.claim(t, tt.key, "w1")
		if _, err := e.j.Send(e.ctx, tt.key, "w1"); err != nil {
			t.Fatal(err)
		}
		op, err := e.j.Record(e.ctx, tt.key, journal.Report{Worker: "w1", To: journal.Applied, Evidence: tt.report})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := e.j.Get(e.ctx, tt.key)
		for where, ev := range map[string]journal.Evidence{"returned": op.Evidence, "stored": got.Evidence} {
			if b, _ := json.Marshal(ev); string(b) != tt.want {
				t.Errorf("%s: %s evidence %s, want %s", tt.key, where, b, tt.want)
			}
		}
	}
}

// settlementOverflow: settling near the largest amount on an account that
// already spent something is refused before anything is written, and the
// account stays readable and balanced.
func settlementOverflow(t *testing.T, h Harness) {
	e := open(t, h)
	if _, err := e.l.Open(e.ctx, "big", "micro-USD", ledger.MaxAmount); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"spent", "open"} {
		if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: id, Account: "big", Amount: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.l.Settle(e.ctx, "spent", 10); err != nil {
		t.Fatal(err)
	}
	_, err := e.l.Settle(e.ctx, "open", ledger.MaxAmount-5)
	var oe *ledger.OverflowError
	if !errors.Is(err, ledger.ErrOverflow) || !errors.As(err, &oe) || oe.Account != "big" || !strings.Contains(err.Error(), `"open"`) {
		t.Fatalf("settling near the largest amount after spending 10: %v; want an *OverflowError naming the hold and the account", err)
	}
	acct, err := e.l.Account(e.ctx, "big")
	if err != nil || acct.Held != 10 || acct.Spent != 10 {
		t.Fatalf("account after the refused settlement: %+v, %v; want held 10, spent 10", acct, err)
	}
	if bad, err := e.l.Verify(e.ctx); err != nil || len(bad) != 0 {
		t.Fatalf("verify after the refused settlement: %+v, %v", bad, err)
	}
	// The hold is still held, and a hold near the largest amount is
	// refused as not fitting, not stored past it.
	if _, err := e.l.Settle(e.ctx, "open", 9); err != nil {
		t.Fatalf("settling the same hold with a sane amount: %v", err)
	}
	_, err = e.l.Hold(e.ctx, ledger.HoldRequest{ID: "huge", Account: "big", Amount: ledger.MaxAmount})
	if !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Fatalf("a hold of the largest amount on an account that spent 19: %v; want it refused as not fitting", err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: "rest", Account: "big", Amount: ledger.MaxAmount - 19}); err != nil {
		t.Fatalf("a hold of exactly what is left: %v", err)
	}
	if acct, err := e.l.Account(e.ctx, "big"); err != nil || acct.Held != ledger.MaxAmount-19 || acct.Available() != 0 {
		t.Fatalf("account at the largest amount: %+v, %v", acct, err)
	}
}

// storeOverflow: the store's own MoveHeld refuses a change that would take
// an account past the largest amount, whoever calls it.
func storeOverflow(t *testing.T, h Harness) {
	e := open(t, h)
	e.l.Open(e.ctx, "acct", "micro-USD", 100)
	e.l.Hold(e.ctx, ledger.HoldRequest{ID: "h", Account: "acct", Amount: 10})
	e.l.Settle(e.ctx, "h", 10)
	err := e.update(func(tx Tx) error { return tx.MoveHeld(e.ctx, "acct", 0, math.MaxInt64) })
	if !errors.Is(err, ledger.ErrOverflow) {
		t.Fatalf("MoveHeld past the largest amount: %v; want ErrOverflow", err)
	}
	if acct, err := e.l.Account(e.ctx, "acct"); err != nil || acct.Spent != 10 || acct.Held != 0 {
		t.Fatalf("account after the refused move: %+v, %v", acct, err)
	}
	err = e.update(func(tx Tx) error { return tx.MoveHeld(e.ctx, "nope", 0, 1) })
	if !errors.Is(err, ledger.ErrNoAccount) {
		t.Fatalf("MoveHeld on an unknown account: %v", err)
	}
}

// exactNumbers: evidence numbers come back digit for digit: a provider id
// above 2^53 is not rounded through a float64.
func exactNumbers(t *testing.T, h Harness) {
	e := open(t, h)
	ev := journal.Evidence{
		"above_2_53": int64(9007199254740993),
		"max_uint64": uint64(math.MaxUint64),
		"min_int64":  int64(math.MinInt64),
		"decimal":    0.1,
		"as_number":  json.Number("12345678901234567890123"),
		"nested":     map[string]any{"ids": []any{int64(9007199254740995)}},
	}
	want := map[string]string{"above_2_53": "9007199254740993", "max_uint64": "18446744073709551615",
		"min_int64": "-9223372036854775808", "decimal": "0.1", "as_number": "12345678901234567890123"}
	if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "k", Kind: "charge", Evidence: ev}); err != nil {
		t.Fatal(err)
	}
	check := func(where string, got journal.Evidence) {
		t.Helper()
		for k, w := range want {
			if n, ok := got[k].(json.Number); !ok || n.String() != w {
				t.Errorf("%s: evidence %s = %v (%T), want the json.Number %s", where, k, got[k], got[k], w)
			}
		}
		ids, _ := got["nested"].(map[string]any)["ids"].([]any)
		if len(ids) != 1 || fmt.Sprint(ids[0]) != "9007199254740995" {
			t.Errorf("%s: nested evidence %v", where, got["nested"])
		}
	}
	op, err := e.j.Get(e.ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	check("get", op.Evidence)
	ops, err := e.j.List(e.ctx, journal.Filter{Kind: "charge"})
	if err != nil || len(ops) != 1 {
		t.Fatalf("list: %d, %v", len(ops), err)
	}
	check("list", ops[0].Evidence)
	hist, err := e.j.History(e.ctx, "k")
	if err != nil || len(hist) != 1 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}
	check("audit", hist[0].Evidence)

	// Through a resolution too.
	e.claim(t, "k", "w1")
	e.j.Send(e.ctx, "k", "w1")
	e.j.Record(e.ctx, "k", journal.Report{Worker: "w1", To: journal.Ambiguous})
	if _, err := e.j.Resolve(e.ctx, "k", journal.Resolution{To: journal.Applied, By: "ana", Note: "found", Evidence: ev}); err != nil {
		t.Fatal(err)
	}
	op, _ = e.j.Get(e.ctx, "k")
	if op.Resolution == nil {
		t.Fatal("the resolution was not stored")
	}
	check("resolution", op.Resolution.Evidence)
}

// invalidText: keys, names and evidence that some store would refuse or
// change (NUL, invalid UTF-8, past the documented sizes) are refused by the
// journal and the ledger before any store sees them, the same way
// everywhere, and change nothing.
func invalidText(t *testing.T, h Harness) {
	e := open(t, h)
	bad := map[string]string{
		"NUL":           "order\x007",
		"invalid UTF-8": "order-\xff\xfe",
		"1 MB":          strings.Repeat("k", 1<<20),
	}
	e.into(t, "sending", journal.Sending)
	e.into(t, "amb", journal.Ambiguous)
	e.l.Open(e.ctx, "acct", "micro-USD", 100)
	for what, s := range bad {
		calls := map[string]func() error{
			"insert key": func() error {
				_, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: s, Kind: "charge"})
				return err
			},
			"insert subject": func() error {
				_, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "ok", Kind: "charge", Subject: s})
				return err
			},
			"start worker": func() error {
				_, err := e.j.Start(e.ctx, journal.NewOperation{Key: "ok", Kind: "charge"}, s)
				return err
			},
			"get": func() error { _, err := e.j.Get(e.ctx, s); return err },
			"list": func() error {
				_, err := e.j.List(e.ctx, journal.Filter{SubjectPrefix: s})
				return err
			},
			"list keys": func() error {
				_, err := e.j.List(e.ctx, journal.Filter{Keys: []string{"ok", s}})
				return err
			},
			"holds of an operation": func() error {
				_, err := e.l.Holds(e.ctx, ledger.HoldFilter{Operation: s})
				return err
			},
			"insert evidence": func() error {
				_, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: "ok", Kind: "charge", Evidence: journal.Evidence{"id": s}})
				return err
			},
			"evidence key": func() error {
				return e.j.Annotate(e.ctx, "sending", "w1", journal.Evidence{s: "x"})
			},
			"record evidence": func() error {
				_, err := e.j.Record(e.ctx, "sending", journal.Report{Worker: "w1", To: journal.Applied, Evidence: journal.Evidence{"nested": []any{s}}})
				return err
			},
			"resolution note": func() error {
				_, err := e.j.Resolve(e.ctx, "amb", journal.Resolution{To: journal.Applied, By: "ana", Note: s})
				return err
			},
			"account name": func() error { _, err := e.l.Open(e.ctx, s, "micro-USD", 1); return err },
			"hold id": func() error {
				_, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: s, Account: "acct", Amount: 1})
				return err
			},
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, journal.ErrInvalid) && !errors.Is(err, ledger.ErrInvalid) {
				t.Errorf("%s with %s: %v; want the input refused (ErrInvalid)", name, what, err)
				continue
			}
			if msg := err.Error(); !utf8.ValidString(msg) || strings.IndexByte(msg, 0) >= 0 || len(msg) > 2000 {
				t.Errorf("%s with %s: the error message carries the bad input: %q", name, what, msg[:min(len(msg), 200)])
			}
		}
	}
	// Nothing of it was stored, and the operations are where they were.
	if ops, err := e.j.List(e.ctx, journal.Filter{}); err != nil || len(ops) != 2 {
		t.Fatalf("after the refusals: %d operations, %v; want the 2 of the test", len(ops), err)
	}
	for key, state := range map[string]journal.State{"sending": journal.Sending, "amb": journal.Ambiguous} {
		if op, _ := e.j.Get(e.ctx, key); op.State != state || len(op.Evidence) != 0 {
			t.Errorf("%s after the refusals: %s, evidence %v", key, op.State, op.Evidence)
		}
	}
	// The refused report can be made again without the bad evidence.
	if _, err := e.j.Record(e.ctx, "sending", journal.Report{Worker: "w1", To: journal.Applied}); err != nil {
		t.Fatalf("recording after a refused report: %v", err)
	}
	if acct, err := e.l.Account(e.ctx, "acct"); err != nil || acct.Held != 0 {
		t.Fatalf("account after the refusals: %+v, %v", acct, err)
	}
}

// storableDetail: a report's detail, written by a program from an error,
// never stops an outcome from being recorded: NUL and invalid UTF-8 are
// replaced and a long one is cut, the same way on every store.
func storableDetail(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "k", journal.Sending)
	detail := "upstream said \x00\xff: " + strings.Repeat("é", 40_000)
	op, err := e.j.Record(e.ctx, "k", journal.Report{Worker: "w1", To: journal.Ambiguous, Phase: "sent", Detail: detail})
	if err != nil {
		t.Fatalf("record with a NUL, invalid UTF-8 and 80 KB in the detail: %v", err)
	}
	got, _ := e.j.Get(e.ctx, "k")
	for where, s := range map[string]string{"returned": op.LastError, "stored": got.LastError} {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 || len(s) > journal.MaxTextBytes || !strings.HasPrefix(s, "upstream said \uFFFD\uFFFD: éé") {
			t.Errorf("%s detail: %d bytes starting %q; want valid text of at most %d bytes", where, len(s), s[:min(len(s), 30)], journal.MaxTextBytes)
		}
	}
	if got.State != journal.Ambiguous || got.LastError != op.LastError {
		t.Fatalf("stored %s, detail of %d bytes; returned %d bytes", got.State, len(got.LastError), len(op.LastError))
	}
}

// valuesAtTheLimits: the longest keys, names and evidence the journal and
// the ledger accept, in multi-byte characters, are stored and read back
// unchanged.
func valuesAtTheLimits(t *testing.T, h Harness) {
	e := open(t, h)
	fill := func(n int) string { // n bytes of 2-, 3- and 4-byte characters
		var b strings.Builder
		for _, r := range strings.Repeat("é€😀", n) {
			if b.Len()+utf8.RuneLen(r) > n {
				break
			}
			b.WriteRune(r)
		}
		return b.String() + strings.Repeat("x", n-b.Len())
	}
	key, kind, subject, worker := fill(journal.MaxKeyBytes), fill(journal.MaxKindBytes), fill(journal.MaxKeyBytes), fill(journal.MaxNameBytes)
	big := fill(journal.MaxEvidenceBytes - 200)
	if _, _, err := e.j.Insert(e.ctx, journal.NewOperation{Key: key, Kind: kind, Subject: subject, Evidence: journal.Evidence{"blob": big}}); err != nil {
		t.Fatalf("insert at the limits: %v", err)
	}
	ops, err := e.j.Claim(e.ctx, kind, worker, 1)
	if err != nil || len(ops) != 1 || ops[0].Key != key || ops[0].Subject != subject || ops[0].Kind != kind {
		t.Fatalf("claim at the limits: %d, %v", len(ops), err)
	}
	if _, err := e.j.Send(e.ctx, key, worker); err != nil {
		t.Fatalf("send at the limits: %v", err)
	}
	op, err := e.j.Record(e.ctx, key, journal.Report{Worker: worker, To: journal.Applied, Evidence: journal.Evidence{"id": key}})
	if err != nil {
		t.Fatalf("record at the limits: %v", err)
	}
	got, err := e.j.Get(e.ctx, key)
	if err != nil || got.State != journal.Applied || got.Worker != worker || got.Evidence["blob"] != big || got.Evidence["id"] != key || op.Evidence["id"] != key {
		t.Fatalf("read back at the limits: %s, worker ok %v, blob ok %v, %v", got.State, got.Worker == worker, got.Evidence["blob"] == big, err)
	}
	if ops, err := e.j.List(e.ctx, journal.Filter{Kind: kind, SubjectPrefix: subject}); err != nil || len(ops) != 1 {
		t.Fatalf("list by the longest prefix: %d, %v", len(ops), err)
	}
	for what, past := range map[string]journal.NewOperation{
		"key":      {Key: key + "x", Kind: "charge"},
		"kind":     {Key: "k", Kind: kind + "x"},
		"subject":  {Key: "k", Kind: "charge", Subject: subject + "x"},
		"evidence": {Key: "k", Kind: "charge", Evidence: journal.Evidence{"blob": big + strings.Repeat("x", 300)}},
	} {
		if _, _, err := e.j.Insert(e.ctx, past); !errors.Is(err, journal.ErrInvalid) {
			t.Errorf("a %s one byte past the limit: %v; want ErrInvalid", what, err)
		}
	}

	name, id := fill(ledger.MaxNameBytes), fill(ledger.MaxIDBytes)
	if _, err := e.l.Open(e.ctx, name, fill(ledger.MaxUnitBytes), 100); err != nil {
		t.Fatalf("account at the limits: %v", err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: id, Account: name, Amount: 7, Operation: key}); err != nil {
		t.Fatalf("hold at the limits: %v", err)
	}
	if hold, err := e.l.Settle(e.ctx, id, 7); err != nil || hold.ID != id || hold.Operation != key {
		t.Fatalf("settle at the limits: %+v, %v", hold.State, err)
	}
	if acct, err := e.l.Account(e.ctx, name); err != nil || acct.Spent != 7 || acct.Name != name {
		t.Fatalf("account read back: %+v, %v", acct.Spent, err)
	}
	if _, err := e.l.Hold(e.ctx, ledger.HoldRequest{ID: id + "x", Account: name, Amount: 1}); !errors.Is(err, ledger.ErrInvalid) {
		t.Errorf("a hold id past the limit: %v; want ErrInvalid", err)
	}
}

// damagedRow: an operation whose stored evidence was damaged behind the
// journal's back is reported by key, and does not hide the others.
func damagedRow(t *testing.T, h Harness) {
	e := open(t, h)
	e.into(t, "a", journal.FailedSafe)
	e.into(t, "c", journal.FailedSafe)
	e.into(t, "b", journal.Pending) // last: into's claims would lease it
	h.Corrupt(t, e.s, "b")

	ops, err := e.j.List(e.ctx, journal.Filter{Kind: "charge"})
	bad, only := journal.Corrupt(err)
	if len(ops) != 2 || ops[0].Key != "a" || ops[1].Key != "c" || !only || len(bad) != 1 || bad[0].Key != "b" || !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("list with b damaged: %d operations, %v; want a and c, and b reported", len(ops), err)
	}
	if _, err := e.j.Get(e.ctx, "b"); !errors.Is(err, journal.ErrCorrupt) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("get of the damaged operation: %v", err)
	}
	rep, err := e.j.RetrySafe(e.ctx, journal.Scope{Kind: "charge", By: "ana"})
	if err != nil || strings.Join(rep.Moved, ",") != "a,c" || len(rep.Left) != 1 || rep.Left[0].Key != "b" {
		t.Fatalf("retry-safe with b damaged: %+v, %v; want a and c moved, b left with why", rep, err)
	}
	claimed, err := e.j.Claim(e.ctx, "charge", "w2", 10)
	if len(claimed) != 2 || !errors.Is(err, journal.ErrCorrupt) {
		t.Fatalf("claim with b damaged: %d claimed, %v; want a and c, and b reported", len(claimed), err)
	}
	if _, err := e.j.Send(e.ctx, "a", "w2"); err != nil {
		t.Fatalf("the claim of a holds despite b: %v", err)
	}
}
