// Package output is the JSON that both products print for the same
// things, so that a script reads an operation of the journal or its
// resolution the same way from either:
// snake_case names, [] rather than null, times in RFC 3339 and omitted
// when unknown, durations in seconds with names that say so, and nested
// JSON as JSON. docs/schemas describes each command's output.
package output

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// Operation is one operation of the journal: a paid request or a tool
// call, its state and what is known of its outcome.
type Operation struct {
	Key     string `json:"key"`
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	State   string `json:"state"`
	// Attempts counts the times it was sent.
	Attempts int `json:"attempts"`
	// LastPhase and LastError describe the last failure, if any.
	LastPhase string         `json:"last_phase,omitempty"`
	LastError string         `json:"last_error,omitempty"`
	Evidence  map[string]any `json:"evidence"`
	// Worker holds the lease, or held it last.
	Worker string `json:"worker,omitempty"`
	// LeaseExpires is when the worker's lease runs out; absent when no
	// lease is held.
	LeaseExpires time.Time   `json:"lease_expires,omitzero"`
	Created      time.Time   `json:"created"`
	Updated      time.Time   `json:"updated"`
	Resolution   *Resolution `json:"resolution,omitempty"`
}

// Resolution is how a person or a reconciliation settled an ambiguous
// operation.
type Resolution struct {
	To       string         `json:"to"`
	By       string         `json:"by"`
	Note     string         `json:"note"`
	At       time.Time      `json:"at,omitzero"`
	Evidence map[string]any `json:"evidence"`
}

// FromOperation is op as both products print it. The evidence values
// named in nested hold JSON text (a tool call's arguments): they are
// printed as the JSON they hold.
func FromOperation(op journal.Operation, nested ...string) Operation {
	out := Operation{Key: op.Key, Kind: op.Kind, Subject: op.Subject, State: string(op.State), Attempts: op.Attempts,
		LastPhase: string(op.LastPhase), LastError: op.LastError, Evidence: Evidence(op.Evidence, nested...),
		Worker: op.Worker, LeaseExpires: op.LeaseExpires, Created: op.Created, Updated: op.Updated}
	if r := op.Resolution; r != nil {
		out.Resolution = &Resolution{To: string(r.To), By: r.By, Note: r.Note, At: r.At, Evidence: Evidence(r.Evidence, nested...)}
	}
	return out
}

// FromOperations is ops as both products print them: [] for none.
func FromOperations(ops []journal.Operation, nested ...string) []Operation {
	out := make([]Operation, len(ops))
	for i, op := range ops {
		out[i] = FromOperation(op, nested...)
	}
	return out
}

// Evidence is e as both products print it, never null. Values in seconds
// that older versions recorded under names ending in _s are named
// _seconds; the values named in nested that hold JSON text are printed
// as that JSON.
func Evidence(e journal.Evidence, nested ...string) map[string]any {
	out := make(map[string]any, len(e))
	for k, v := range e {
		if name, ok := strings.CutSuffix(k, "_s"); ok {
			k = name + "_seconds"
		}
		out[k] = v
	}
	for _, k := range nested {
		if s, ok := out[k].(string); ok && json.Valid([]byte(s)) {
			out[k] = json.RawMessage(s)
		}
	}
	return out
}

// Plural is n and the noun, singular for one: "1 file", "2 files".
// plural is the noun's plural when it is not the singular and "s".
func Plural(n int, singular string, plural ...string) string {
	if n == 1 {
		return "1 " + singular
	}
	p := singular + "s"
	if len(plural) > 0 {
		p = plural[0]
	}
	return strconv.Itoa(n) + " " + p
}

// Bytes is n bytes in decimal units, as file managers write them: "512
// bytes", "1.5 kB", "2.3 GB".
func Bytes(n int64) string {
	for _, u := range []struct {
		at   float64
		unit string
	}{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if float64(n) >= u.at {
			return fmt.Sprintf("%.1f %s", float64(n)/u.at, u.unit)
		}
	}
	return Plural(int(n), "byte")
}

// ShellQuote is s as a shell reads it back as one word: as it is when it
// holds nothing a shell treats specially, else in single quotes. A
// command that a program suggests is pasted into a shell.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-:,=@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Left is an operation that a retry of what provably had no effect left
// alone, and why.
type Left struct {
	Key   string `json:"key"`
	State string `json:"state"`
	Why   string `json:"why"`
}

// FromLeft is l as both products print it.
func FromLeft(l journal.Left) Left { return Left{Key: l.Key, State: string(l.State), Why: l.Why} }
