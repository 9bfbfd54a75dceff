package toolgate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// identity is what a call of a tool acts on, for the guard.
type identity struct {
	// subject is shared by every call of the tool on the same resource.
	subject string
	// call is shared only by calls with the same arguments too.
	call string
	// resource names the resource for messages: the method, the path and
	// its parameters' values.
	resource string
}

// identify returns the identity of a call of t with the arguments a.
// The upstream is part of it: one journal may serve several APIs whose
// tools share names.
func (c *Caller) identify(t *Tool, a map[string]any) identity {
	var params []string
	args, _ := arguments(t.op)
	for _, arg := range args {
		if arg.param.In != "path" {
			continue
		}
		if v, ok := a[arg.name]; ok {
			params = append(params, arg.name+"="+text(v))
		}
	}
	sort.Strings(params)
	prefix := c.base.String() + "\x00" + t.Name + "\x00"
	norm, _ := json.Marshal(a) // maps marshal with sorted keys
	resource := t.Method + " " + t.Path
	if len(params) > 0 {
		resource += " (" + strings.Join(params, ", ") + ")"
	}
	return identity{
		subject:  "toolgate/" + t.Name + "/" + digest(prefix+strings.Join(params, "\x00")),
		call:     digest(prefix + string(norm)),
		resource: resource,
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// begin records a call of a tool that changes state, refusing it while a
// call that the tool's guard holds it back for is in flight or ambiguous.
func (c *Caller) begin(ctx context.Context, t *Tool, a map[string]any, args json.RawMessage) (key, refusal string, err error) {
	id := c.identify(t, a)
	c.beginning.Lock()
	defer c.beginning.Unlock()
	if refusal, err := c.held(ctx, t, id); err != nil || refusal != "" {
		return "", refusal, err
	}
	key = id.subject + "/" + strings.ToLower(rand.Text()[:10])
	ev := journal.Evidence{"tool": t.Name, "method": t.Method, "path": t.Path, "resource": id.resource, "call": id.call,
		"upstream": rubicon.RedactURL(c.base), "arguments": snippet(c.redact.string(string(args)))}
	if t.Confirm {
		ev["confirmed"] = "a person accepted it through the client"
	}
	if _, err := c.journal.Start(ctx, journal.NewOperation{Key: key, Kind: JournalKind, Subject: id.subject, Evidence: ev}, c.worker); err != nil {
		return "", "", err
	}
	return key, "", nil
}

// held returns why a call of t with identity id is refused, if an open
// call holds it back.
func (c *Caller) held(ctx context.Context, t *Tool, id identity) (refusal string, err error) {
	open, err := c.journal.List(ctx, journal.Filter{Kind: JournalKind, SubjectPrefix: id.subject,
		States: []journal.State{journal.Pending, journal.Sending, journal.Ambiguous}})
	if err != nil {
		return "", err
	}
	for _, op := range open {
		if op.Subject != id.subject || (t.Guard == config.GuardIdentical && op.Evidence["call"] != id.call) {
			continue
		}
		return c.refusal(t, id, op), nil
	}
	return "", nil
}

// refusal tells the agent why its call was not sent and what to do.
func (c *Caller) refusal(t *Tool, id identity, open journal.Operation) string {
	same := "a call to " + t.Name + " on the same resource, " + id.resource + ","
	if t.Guard == config.GuardIdentical || open.Evidence["call"] == id.call {
		same = "an identical call to " + t.Name + " (same arguments)"
	}
	if open.State != journal.Ambiguous {
		return fmt.Sprintf("REFUSED: %s is in flight. Nothing was sent. Wait for its result instead of calling again.", same)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "REFUSED: %s made at %s has an unknown outcome and may have been applied. Nothing was sent: "+
		"another call could apply the change twice, or on top of one nobody has checked.\n", same, open.Created.UTC().Format(time.RFC3339))
	if checks := c.readersFor(t); len(checks) > 0 {
		fmt.Fprintf(&b, "Check whether it was applied with %s; ", strings.Join(checks, " or "))
	} else {
		b.WriteString("Ask a person to check in the upstream system whether it was applied; ")
	}
	fmt.Fprintf(&b, "a person then settles it: toolgate resolve %s (--applied | --not-applied).", open.Key)
	return b.String()
}
