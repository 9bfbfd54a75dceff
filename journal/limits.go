package journal

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rubicon-go/rubicon/internal/input"
)

// Limits on what the journal stores. They are the same whatever the store:
// the journal checks its input before a store sees it, so that every store
// keeps the same values and refuses the same ones. Text (keys, kinds,
// subjects, names, notes, evidence strings and keys) is valid UTF-8 without
// NUL. Input that breaks a limit is refused with an error wrapping
// [ErrInvalid]; a report's Detail, which a program writes from an error
// and which must never stop an outcome from being recorded, is made to fit
// instead (see [Report]).
const (
	// MaxKeyBytes bounds an operation's key, its subject, and a filter's
	// subject prefix.
	MaxKeyBytes = 1024
	// MaxKindBytes bounds an operation's kind.
	MaxKindBytes = 128
	// MaxNameBytes bounds a worker's name, and the name of who resolved an
	// operation or asked for a safe retry.
	MaxNameBytes = 256
	// MaxTextBytes bounds a resolution's note and a report's detail.
	MaxTextBytes = 16 << 10
	// MaxEvidenceBytes bounds the evidence given in one call, encoded as
	// JSON.
	MaxEvidenceBytes = 64 << 10
)

// ErrInvalid is wrapped by the errors that refuse input breaking the
// journal's limits.
var ErrInvalid = errors.New("invalid input to the journal")

// invalid wraps a message about bad input.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

func checkKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return invalid(errors.New("an operation needs a key that names its side effect"))
	}
	return invalid(input.Text("operation key", key, MaxKeyBytes))
}

func checkName(what, name string) error {
	if strings.TrimSpace(name) == "" {
		return invalid(fmt.Errorf("%s is empty: give a name", what))
	}
	return invalid(input.Text(what, name, MaxNameBytes))
}

func checkEvidence(ev Evidence) error {
	if len(ev) == 0 {
		return nil
	}
	_, err := input.JSON("evidence", ev, MaxEvidenceBytes)
	return invalid(err)
}

func checkNew(op NewOperation) error {
	if err := checkKey(op.Key); err != nil {
		return err
	}
	if strings.TrimSpace(op.Kind) == "" {
		return invalid(fmt.Errorf("operation %q needs a kind", op.Key))
	}
	if err := input.Text("kind", op.Kind, MaxKindBytes); err != nil {
		return invalid(fmt.Errorf("operation %q: %w", op.Key, err))
	}
	if err := input.Text("subject", op.Subject, MaxKeyBytes); err != nil {
		return invalid(fmt.Errorf("operation %q: %w", op.Key, err))
	}
	if err := input.Text("guard", op.Guard, MaxKeyBytes); err != nil {
		return invalid(fmt.Errorf("operation %q: %w", op.Key, err))
	}
	if err := input.Text("replay key", op.Replay, MaxKeyBytes); err != nil {
		return invalid(fmt.Errorf("operation %q: %w", op.Key, err))
	}
	if op.ReplayWithin < 0 {
		return invalid(fmt.Errorf("operation %q: replay window %s is negative: use 0 for none", op.Key, op.ReplayWithin))
	}
	return checkEvidence(op.Evidence)
}

func checkFilter(f Filter) error {
	if err := input.Text("kind", f.Kind, MaxKindBytes); err != nil {
		return invalid(err)
	}
	if err := input.Text("subject prefix", f.SubjectPrefix, MaxKeyBytes); err != nil {
		return invalid(err)
	}
	for _, s := range f.States {
		if !s.Valid() {
			return invalid(fmt.Errorf("filter state %q is not a state: use one of %v", s, States))
		}
	}
	for _, k := range f.Keys {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	if f.Limit < 0 {
		return invalid(fmt.Errorf("filter limit %d is negative: use 0 for no limit", f.Limit))
	}
	return nil
}

// cleanDetail makes a report's detail storable by every store.
func cleanDetail(s string) string { return input.Clean(s, MaxTextBytes) }

func checkReport(key string, r Report) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkName("worker", r.Worker); err != nil {
		return err
	}
	return checkEvidence(r.Evidence)
}

func checkResolution(key string, res Resolution) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := input.Text("the name of who decided (By)", res.By, MaxNameBytes); err != nil {
		return invalid(fmt.Errorf("resolve %q: %w", key, err))
	}
	if err := input.Text("note", res.Note, MaxTextBytes); err != nil {
		return invalid(fmt.Errorf("resolve %q: %w", key, err))
	}
	return checkEvidence(res.Evidence)
}
