package toolgate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/journal"
)

// AgainMeta is the _meta key of a tools/call request that asks, on
// purpose, for a second effect identical to one already applied: with
// "toolgate/again": true the call is sent even within the tool's replay
// window. It is request metadata, not an argument, so that it can never
// collide with a parameter of the API's own.
const AgainMeta = "toolgate/again"

// ReplayedMeta is the _meta key of a result answered from the journal: the
// key of the call it replays and when that call was applied.
const ReplayedMeta = "toolgate/replayed"

// origin is who makes a call and how, as far as toolgate can tell.
type origin struct {
	// principal names the MCP client and the credentials it came with;
	// a call is identical to another only for the same principal.
	principal string
	// again asks for a second effect on purpose (AgainMeta).
	again bool
}

type originKey struct{}

// withOrigin returns ctx carrying the origin of req, a tools/call request.
func withOrigin(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, originKey{}, originOf(req))
}

// originOf finds who sent req: the client's name and version (from the
// request's _meta in the 2026-07-28 revision, from the session's
// initialization before), the bearer token it presented (as a digest, never
// the token), and the user an authorization middleware verified.
func originOf(req *mcp.CallToolRequest) origin {
	if req == nil {
		return origin{}
	}
	var parts []string
	if ci := req.ClientInfo(); ci != nil {
		parts = append(parts, "client="+ci.Name+"/"+ci.Version)
	}
	if req.Extra != nil {
		if req.Extra.Header != nil {
			if token := clientToken(req.Extra.Header); token != "" {
				parts = append(parts, "token="+digest(token))
			}
		}
		if ti := req.Extra.TokenInfo; ti != nil && ti.UserID != "" {
			parts = append(parts, "user="+ti.UserID)
		}
	}
	o := origin{principal: strings.Join(parts, "\x00")}
	if req.Params != nil {
		if v, ok := req.Params.Meta[AgainMeta].(bool); ok {
			o.again = v
		}
	}
	return o
}

// callOrigin returns the origin ctx carries, or none.
func callOrigin(ctx context.Context) origin {
	o, _ := ctx.Value(originKey{}).(origin)
	return o
}

// replayKey names the effect of a call of identity id made by principal:
// calls with the same key are the same call, re-issued.
func replayKey(id identity, principal string) string {
	return "toolgate/" + digest(id.call+"\x00"+principal)
}

// replayAnswer is the evidence key of an applied call's answer as the agent
// got it, kept for a replay; replayAnswerCut says it was cut.
const (
	replayAnswer    = "replay_answer"
	replayAnswerCut = "replay_answer_cut"
)

// maxReplayJSON bounds a kept answer encoded as JSON, well inside what the
// journal takes as a report's evidence.
const maxReplayJSON = 40 << 10

// replayable returns text cut to fit the journal as evidence, and whether
// it was cut.
func replayable(text string) (string, bool) {
	cut := false
	for n := min(len(text), 32<<10); ; n /= 2 {
		if n < len(text) {
			text, cut = strings.ToValidUTF8(text[:n], ""), true
		}
		if b, err := json.Marshal(text); err == nil && len(b) <= maxReplayJSON {
			return storable(text), cut
		}
	}
}

// replayed is the result of a call identical to applied, a call already
// applied: its recorded answer, marked as a replay, with nothing sent.
func (c *Caller) replayed(t *Tool, applied journal.Operation) Result {
	at := applied.Updated.UTC().Format(time.RFC3339)
	note := fmt.Sprintf("REPLAYED: this call was already applied at %s (toolgate call %s); nothing was sent again. "+
		"The answer below is the one that call got. A separate second %s with the same arguments needs the client to send "+
		"the call with _meta {%q: true}.", at, applied.Key, t.Name, AgainMeta)
	r := Result{Meta: map[string]any{ReplayedMeta: map[string]any{"key": applied.Key, "applied_at": at}}}
	answer, kept := applied.Evidence[replayAnswer].(string)
	cut, _ := applied.Evidence[replayAnswerCut].(bool)
	switch {
	case kept && answer == "":
		r.Text = note + fmt.Sprintf("\n\nIts answer had no body (status %v).", applied.Evidence["status"])
	case kept:
		r.Text = note + "\n\n" + answer
		var m map[string]any
		if !cut && json.Unmarshal([]byte(answer), &m) == nil {
			r.Structured = m
		}
		if cut {
			r.Text += "\n[the answer kept was cut]"
		}
	case applied.Resolution != nil:
		r.Text = note + fmt.Sprintf("\n\nIts answer was lost; %s settled it as applied: %s.", applied.Resolution.By, applied.Resolution.Note)
	default:
		r.Text = note + "\n\nIts answer was not text, and is not kept: read the resource to see it."
	}
	return r
}
