package toolgate

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/toolgate/risk"
)

// A Confirmer asks a person whether a call may be sent. Every call of a
// tool configured with expose: confirm is put to it at one point of the
// call path ([Caller.Call]), after its arguments are checked and its
// request built, and before anything is recorded or sent; a call that
// comes by a way that cannot ask anyone passes nil, and such calls are
// refused. An MCP server's Confirmer asks the person at the client that
// made the call, through MCP elicitation, in the way the client's
// protocol version has (elicitation).
type Confirmer interface {
	// Confirm puts q to a person and returns their answer. It may wait
	// for it, at most q.Timeout.
	Confirm(ctx context.Context, q Question) Answer
}

// Question is what a person is asked before a call is sent.
type Question struct {
	Tool string
	// Class and Reasons say what the call will do, as toolgate judged the
	// tool: its risk class and the reasons for it.
	Class   risk.Class
	Reasons []string
	// Request is the request that is sent if the person accepts: the
	// very one, built once.
	Request ShownRequest
	// Message shows all of it as the person reads it: the request, what
	// it will do, and how to accept it.
	Message string
	// Call identifies the exact request: the upstream, the tool and the
	// arguments, which decide every byte of it.
	Call string
	// Timeout bounds the wait for the answer. The call's deadline starts
	// once the person has answered.
	Timeout time.Duration
}

// ShownRequest is a request as a person confirming it sees it. The
// upstream's credentials are added as it leaves and are never shown: the
// headers name them, and the URL shows the values of query parameters
// named as credentials (api_key, token, signature) as [redacted].
type ShownRequest struct {
	Method string
	URL    string
	// Header holds the headers, "Name: value", sorted by name.
	Header []string
	// Credentials says where each credential goes that no header shows:
	// "the query parameter api_key (apiKey)".
	Credentials []string
	// Body is the body as text, cut at 4 KiB, or, when Text is false,
	// what it is; "" when there is none. BodySize is its size in bytes,
	// BodyType its media type, and Whole reports whether Body is all of
	// it.
	Body     string
	BodySize int
	BodyType string
	Text     bool
	Whole    bool
}

// Action is what became of a question.
type Action int

const (
	// Unanswered: no person could be asked, or none answered in time.
	Unanswered Action = iota
	// Accepted: the person accepted; the call is sent.
	Accepted
	// Declined: the person declined; nothing is sent.
	Declined
	// Cancelled: the person dismissed the question; nothing is sent.
	Cancelled
	// Asked: the question goes back to the client as this call's
	// result, and the call comes again with the answer. Nothing is sent
	// now.
	Asked
)

// Answer is a person's answer to a question.
type Answer struct {
	Action Action
	// Why says, when the question went unanswered, what happened, as a
	// clause the agent reads: "refundOrder needs a person's confirmation
	// through MCP elicitation, which this client does not support".
	Why string
	// input is, when the Action is Asked, the question that goes back to
	// the client as the call's result.
	input *inputRequest
}

// inputRequest is a question asked in a call's result: the form, and the
// state the client sends back with the answer.
type inputRequest struct {
	params *mcp.ElicitParams
	state  string
}

// result is the call's result that asks the question.
func (in *inputRequest) result() *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{confirmInput: in.params}, RequestState: in.state}
}

// maxShown bounds the body and the arguments a question shows, so that a
// large upload does not bury the request line.
const maxShown = 4 << 10

// confirm asks a person, through person, whether the request req built
// for a call of t may be sent. It is the one point of the call path where
// a person is asked. It returns the result to give the agent and false
// when the request may not be sent.
func (c *Caller) confirm(ctx context.Context, t *Tool, req *http.Request, a map[string]any, args []byte, person Confirmer, auth *callAuth) (Result, bool) {
	id := c.identify(t, a)
	if c.journals(t) {
		// Nobody is asked about a call the guard would refuse.
		refusal, err := c.held(ctx, t, id)
		if err != nil {
			return errorResult("the journal could not be read before asking for confirmation (%v). Nothing was sent.", err), false
		}
		if refusal != "" {
			return Result{IsError: true, Text: refusal}, false
		}
	}
	ans := Answer{Why: t.Name + " needs a person's confirmation of each call, and this call came by a way that cannot ask one"}
	if person != nil {
		ans = person.Confirm(ctx, c.question(t, req, args, id, auth))
	}
	// A call not sent is an error result: the agent asked for an effect
	// and did not get it, which a client must not count as done. The
	// words, not the flag, keep the agent from calling again.
	const after = " Nothing was sent. Do not call it again unless the person asks you to."
	switch ans.Action {
	case Accepted:
		return Result{}, true
	case Declined:
		return errorResult("NOT SENT: the person declined this call to %s.%s", t.Name, after), false
	case Cancelled:
		return errorResult("NOT SENT: the person dismissed this call to %s without accepting it.%s", t.Name, after), false
	case Asked:
		r := errorResult("NOT SENT: this call to %s waits for a person's confirmation, which the client was asked for. Nothing was sent.", t.Name)
		r.input = ans.input
		return r, false
	}
	return errorResult("NOT SENT: %s.%s", c.redact.string(ans.Why), after), false
}

// question is what a person is asked about req, the request of a call of
// t with the arguments args and the identity id, sent with auth's
// credentials.
func (c *Caller) question(t *Tool, req *http.Request, args []byte, id identity, auth *callAuth) Question {
	q := Question{Tool: t.Name, Class: t.Risk.Class, Reasons: t.Risk.Reasons, Request: shown(req, auth), Call: id.call, Timeout: t.ConfirmTimeout}
	q.Message = auth.redact.string(describe(q, args))
	return q
}

// shown is req as a person confirming it sees it, its credentials (auth's)
// by name, and any secret it holds (a form field that carries one)
// redacted.
func shown(req *http.Request, auth *callAuth) ShownRequest {
	red := auth.redact.string
	s := ShownRequest{Method: req.Method, URL: red(shownURL(req.URL))}
	for _, k := range slices.Sorted(maps.Keys(req.Header)) {
		for _, v := range req.Header[k] {
			s.Header = append(s.Header, red(k+": "+v))
		}
	}
	for _, p := range auth.placements {
		if p.in == "header" {
			s.Header = append(s.Header, p.name+": [the API's credentials, added as it is sent; not shown]")
		} else {
			s.Credentials = append(s.Credentials, p.what)
		}
	}
	s.BodyType = req.Header.Get("Content-Type")
	s.Body, s.BodySize, s.Text = bodyText(req)
	s.Body = red(s.Body)
	s.Whole = s.Text && s.BodySize <= maxShown
	return s
}

// describe writes the message that asks about q: what sends the request,
// the request line, the headers and the body, where credentials go that
// no header shows, the agent's arguments args when the body is not shown
// whole, and what the call will do by its risk reasons.
func describe(q Question, args []byte) string {
	r := q.Request
	var b strings.Builder
	fmt.Fprintf(&b, "An agent asks to send this request with %s, a %s tool:\n\n", q.Tool, q.Class)
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
	for _, h := range r.Header {
		b.WriteString(h + "\n")
	}
	for _, p := range r.Credentials {
		fmt.Fprintf(&b, "[the API's credentials in %s, added as it is sent; not shown]\n", p)
	}
	switch {
	case r.Body == "":
	case r.Whole || !r.Text:
		fmt.Fprintf(&b, "\n%s\n", r.Body)
	default:
		fmt.Fprintf(&b, "\n%s\n\nThe body is %d bytes of %s; the first %d are shown.\n", r.Body, r.BodySize, r.BodyType, maxShown)
	}
	if !r.Whole {
		fmt.Fprintf(&b, "\nThe agent's arguments: %s\n", cut(string(args), maxShown))
	}
	if len(q.Reasons) > 0 {
		fmt.Fprintf(&b, "\nWhat it does: toolgate judges %s %s because\n", q.Tool, q.Class)
		for _, why := range q.Reasons {
			b.WriteString("- " + why + "\n")
		}
	}
	b.WriteString("\nIt is sent only if you accept with \"Send it\" ticked; otherwise nothing is sent.")
	return b.String()
}

// credentialWords are the words of a query parameter's name that say its
// value is a credential: api_key, access_token, X-Amz-Signature.
var credentialWords = map[string]bool{"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true,
	"signature": true, "sig": true, "auth": true, "credential": true, "credentials": true, "session": true, "sessionid": true}

// shownURL is u as a person is shown it: without user information, and
// with the value of each query parameter named as a credential redacted.
// The configured secrets are redacted wherever they are, by the caller's
// redactor.
func shownURL(u *url.URL) string {
	r := *u
	r.User = nil
	if r.RawQuery != "" {
		parts := strings.Split(r.RawQuery, "&")
		for i, part := range parts {
			name, _, hasValue := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil && hasValue && credentialName(n) {
				parts[i] = name + "=" + redacted
			}
		}
		r.RawQuery = strings.Join(parts, "&")
	}
	return r.String()
}

// credentialName reports whether a query parameter's name says it carries
// a credential.
func credentialName(name string) bool {
	for _, field := range strings.FieldsFunc(name, notAlnum) {
		for _, w := range splitCamel(field) {
			if credentialWords[strings.ToLower(w)] {
				return true
			}
		}
	}
	return false
}

// bodyText returns req's body as the person reads it, its size, and
// whether it is shown as text: text as it is, cut at maxShown; other
// content by its size and type.
func bodyText(req *http.Request) (string, int, bool) {
	if req.GetBody == nil || req.ContentLength == 0 {
		return "", 0, true
	}
	r, err := req.GetBody()
	if err != nil {
		return "[the body could not be read back to show it]", int(req.ContentLength), false
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return "[the body could not be read back to show it]", int(req.ContentLength), false
	}
	ct := req.Header.Get("Content-Type")
	if !textual(ct) || !utf8.Valid(data) {
		return fmt.Sprintf("[a body of %d bytes, %s]", len(data), ct), len(data), false
	}
	return cut(string(data), maxShown), len(data), true
}

// textual reports whether content of type ct is text a person can read.
func textual(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/x-www-form-urlencoded" || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// cut returns s cut to at most n bytes, marked as cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncate(s, n) + fmt.Sprintf(" [cut: %d bytes in all]", len(s))
}

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

// elicitation asks people through MCP elicitation, for one server: a
// form with one box to tick, put to the person at the client that made
// the call. Up to protocol 2025-11-25 it is a request of the server's own
// while it serves the call; from multiRoundTripVersion on, the question is
// the call's result, and the client calls again with the answer. Then the
// question's state goes with it, signed with a key of this process: the
// answer counts only for the exact call it was asked about, within the
// time allowed, and once.
type elicitation struct {
	key []byte

	mu   sync.Mutex
	used map[string]time.Time // nonce → when its state expires
}

func newElicitation() *elicitation {
	return &elicitation{key: []byte(rand.Text()), used: map[string]time.Time{}}
}

// at returns the Confirmer of the call req: it asks the person at the
// client that sent it. A call that came without a request has nobody to
// ask.
func (e *elicitation) at(req *mcp.CallToolRequest) Confirmer {
	if req == nil || req.Session == nil {
		return nil
	}
	return asker{e: e, req: req}
}

// asker is the Confirmer of one tools/call request.
type asker struct {
	e   *elicitation
	req *mcp.CallToolRequest
}

// Confirm asks the person at the client, through MCP elicitation.
func (a asker) Confirm(ctx context.Context, q Question) Answer {
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
func (a asker) roundTrip(q Question, params *mcp.ElicitParams) Answer {
	p := a.req.Params
	res, answered := p.InputResponses[confirmInput].(*mcp.ElicitResult)
	st, err := a.e.open(p.RequestState)
	if !answered || err != nil || st.call != q.Call {
		// No answer yet, or one to another question: ask this one.
		return Answer{Action: Asked, input: &inputRequest{params: params, state: a.e.sign(q.Call, time.Now().Add(q.Timeout))}}
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
