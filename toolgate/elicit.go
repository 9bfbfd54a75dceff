package toolgate

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// confirmInput is the key of the confirmation among a call's input
// requests, in protocols where the server asks through the call's result.
const confirmInput = "confirm"

// multiRoundTripVersion is the first protocol version in which a server
// may not send requests of its own while it serves a call: it asks for
// input in the call's result instead, and the client calls again with the
// answer.
const multiRoundTripVersion = "2026-07-28"

// confirmSchema is the form a person fills in: one box to tick. Accepting
// without ticking it sends nothing, so that a client that accepts a form
// with nothing in it on the person's behalf cannot send a call.
var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"send": map[string]any{"type": "boolean", "title": "Send it", "description": "Tick to send this request to the API."},
	},
	"required": []string{"send"},
}

// elicitation asks people through MCP elicitation, for one server. Where
// the protocol has the client call again with the answer, the question's
// state goes with it, signed with a key of this process: the answer
// counts only for the exact call it was asked about, within the time
// allowed, and once.
type elicitation struct {
	key []byte

	mu   sync.Mutex
	used map[string]time.Time // nonce → when its state expires
}

func newElicitation() *elicitation {
	return &elicitation{key: []byte(rand.Text()), used: map[string]time.Time{}}
}

// serve runs call with a Confirmer that asks the person at the client of
// req, and returns the call's result, or the question to return instead
// when the client is to call again with the answer.
func (e *elicitation) serve(req *mcp.CallToolRequest, call func(Confirmer) Result) *mcp.CallToolResult {
	person := &asker{e: e, req: req}
	r := call(person)
	if person.pending != nil {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmInput: person.pending}, RequestState: person.state}
	}
	return result(r)
}

// asker is the Confirmer of one tools/call request: it asks the person at
// the client that sent it.
type asker struct {
	e   *elicitation
	req *mcp.CallToolRequest
	// pending and state, when set, are the question to return as the
	// call's result and the state the client must send back with the
	// answer.
	pending *mcp.ElicitParams
	state   string
}

// Confirm asks the person at the client, through MCP elicitation.
func (a *asker) Confirm(ctx context.Context, q Question) Answer {
	caps := a.req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || (caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return Answer{Why: q.Tool + " needs a person's confirmation through MCP elicitation (a form), which this client does not support"}
	}
	params := &mcp.ElicitParams{Mode: "form", Message: q.Message, RequestedSchema: confirmSchema}
	if p := a.req.Session.InitializeParams(); p != nil && p.ProtocolVersion >= multiRoundTripVersion {
		return a.roundTrip(q, params)
	}
	wait, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	res, err := a.req.Session.Elicit(wait, params)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(wait.Err(), context.DeadlineExceeded):
		return Answer{Why: fmt.Sprintf("the person did not answer the confirmation of this call to %s within %s", q.Tool, q.Timeout)}
	case err != nil:
		return Answer{Why: fmt.Sprintf("the confirmation of this call to %s could not be asked: %v", q.Tool, err)}
	}
	return personsAnswer(q, res)
}

// roundTrip asks through the call's result, or reads the answer the
// client sent with the call.
func (a *asker) roundTrip(q Question, params *mcp.ElicitParams) Answer {
	p := a.req.Params
	res, answered := p.InputResponses[confirmInput].(*mcp.ElicitResult)
	st, err := a.e.open(p.RequestState)
	if !answered || err != nil || st.call != q.Call {
		// No answer yet, or one to another question: ask this one.
		a.pending, a.state = params, a.e.sign(q.Call, time.Now().Add(q.Timeout))
		return Answer{Action: Asked}
	}
	if time.Now().After(st.expires) {
		return Answer{Why: fmt.Sprintf("the person's answer to the confirmation of this call to %s came after the %s allowed", q.Tool, q.Timeout)}
	}
	if !a.e.use(st) {
		return Answer{Why: fmt.Sprintf("this confirmation of a call to %s has already been used for a call; each call needs its own", q.Tool)}
	}
	return personsAnswer(q, res)
}

// personsAnswer reads the answer: accepted only with the box ticked.
func personsAnswer(q Question, res *mcp.ElicitResult) Answer {
	switch res.Action {
	case "accept":
		if send, _ := res.Content["send"].(bool); send {
			return Answer{Action: Accepted}
		}
		return Answer{Action: Declined}
	case "decline":
		return Answer{Action: Declined}
	case "cancel":
		return Answer{Action: Cancelled}
	}
	return Answer{Why: fmt.Sprintf("the client answered the confirmation of this call to %s with %q, which is neither accept, decline nor cancel", q.Tool, res.Action)}
}

// questionState is what a question's state holds: the call it is about,
// when the answer stops counting, and a nonce that makes it single-use.
type questionState struct {
	call    string
	expires time.Time
	nonce   string
}

// sign returns the state of a question about call, signed.
func (e *elicitation) sign(call string, expires time.Time) string {
	payload := strings.Join([]string{call, strconv.FormatInt(expires.UnixMilli(), 10), rand.Text()}, ".")
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(e.mac(payload))
}

// open verifies and reads a state that sign made.
func (e *elicitation) open(state string) (questionState, error) {
	enc, sig, ok := strings.Cut(state, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, e.mac(string(payload))) {
		return questionState{}, errors.New("not a state this server signed")
	}
	parts := strings.Split(string(payload), ".")
	ms, err := strconv.ParseInt(parts[min(1, len(parts)-1)], 10, 64)
	if len(parts) != 3 || err != nil {
		return questionState{}, errors.New("not a state this server signed")
	}
	return questionState{call: parts[0], expires: time.UnixMilli(ms), nonce: parts[2]}, nil
}

func (e *elicitation) mac(payload string) []byte {
	h := hmac.New(sha256.New, e.key)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// use marks st's answer used, and reports whether it was unused. Used
// states are forgotten once they expire, when they are refused anyway.
func (e *elicitation) use(st questionState) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	for n, exp := range e.used {
		if now.After(exp) {
			delete(e.used, n)
		}
	}
	if _, ok := e.used[st.nonce]; ok {
		return false
	}
	e.used[st.nonce] = st.expires
	return true
}
