package recall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/provider"
)

// ErrCannotAsk reports a provider that cannot be asked whether a request
// went through.
var ErrCannotAsk = errors.New("this provider cannot be asked about a request")

// Reconciled is the outcome of asking the provider about one ambiguous
// request.
type Reconciled struct {
	Key   string        `json:"key"`
	Paths []string      `json:"paths"`
	State journal.State `json:"state,omitempty"`
	Error string        `json:"error,omitempty"`
	// Check, when the provider's records proved nothing, says what a
	// person can look at to resolve the request by hand.
	Check   string `json:"check,omitempty"`
	Request string `json:"provider_request_id,omitempty"`
}

// Reconcile asks prov about each ambiguous request of batch and resolves
// it from the answer, with the evidence recorded: applied (with the
// transcript the provider kept) or not applied. A request is resolved not
// applied only when the provider's records were read whole, for the whole
// time since it was committed as sending, and hold no charge of it;
// anything less leaves it ambiguous, with the reason and what a person can
// check (Reconciled.Error and Check). A provider that cannot be asked
// gets ErrCannotAsk and nothing changes.
func (a *Archive) Reconcile(ctx context.Context, batch string, prov *provider.Provider) ([]Reconciled, error) {
	if !prov.KeepsRecords() {
		return nil, fmt.Errorf("%w: %s keeps no record that can be looked up per request; check its usage page around the times 'recall-archive ambiguous' shows, and resolve each request by hand", ErrCannotAsk, prov.Name())
	}
	items, err := a.Ambiguous(ctx, batch)
	if err != nil {
		return nil, err
	}
	out := []Reconciled{}
	for _, it := range items {
		r := Reconciled{Key: it.Key, Paths: it.Paths}
		ev := journal.Evidence{"sent_at": it.SentAt.UTC().Format(time.RFC3339Nano)}
		for k, v := range it.Evidence {
			ev[k] = v
		}
		found, err := prov.Lookup(ctx, it.Key, ev)
		if err != nil {
			r.Error = err.Error()
			if ue, ok := provider.Unproven(err); ok {
				r.Check = ue.Check
			}
			out = append(out, r)
			continue
		}
		d := Decision{By: "reconcile (" + prov.Name() + ")", Evidence: journal.Evidence{"lookup": prov.Name()}}
		if found.Charged {
			d.Applied, d.Note, d.Cost, d.Transcript = true, "the provider lists this request as charged", found.Cost, found.Transcript
			d.Evidence["provider_request_id"] = found.RequestID
			r.Request = found.RequestID
		} else {
			d.Note = "the provider's records, read whole since the request was sent, hold no charge of it"
			if found.RequestID != "" {
				d.Note = "the provider refused the request (" + found.RequestID + "): not charged"
				d.Evidence["provider_request_id"] = found.RequestID
			}
		}
		op, err := a.Resolve(ctx, it.Key, d)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.State = op.State
		}
		out = append(out, r)
	}
	return out, nil
}
