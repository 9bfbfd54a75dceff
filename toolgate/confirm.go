package toolgate

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// A Confirmer asks a person whether a call may be sent. The server
// supplies one for each call, bound to the client that made it. Every
// call of a tool configured with expose: confirm goes through it, after
// its arguments are checked and its request built, and before anything
// is recorded or sent; a call that comes by a way that cannot ask anyone
// passes nil, and such calls are refused.
type Confirmer interface {
	// Confirm puts q to a person and returns their answer. It may wait
	// for it, at most q.Timeout.
	Confirm(ctx context.Context, q Question) Answer
}

// Question is what a person is asked before a call is sent.
type Question struct {
	Tool string
	// Message shows the request as it will be sent: the method, the URL,
	// the headers and the body. The upstream's credentials are added as
	// it leaves and are never shown.
	Message string
	// Call identifies the exact request: the upstream, the tool and the
	// arguments, which decide every byte of it.
	Call string
	// Timeout bounds the wait for the answer. The call's deadline starts
	// once the person has answered.
	Timeout time.Duration
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
	// Asked: the question goes back to the client with this call's
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
}

// maxShown bounds the body and the arguments a question shows, so that a
// large upload does not bury the request line.
const maxShown = 4 << 10

// confirm asks a person, through person, whether the request req built
// for a call of t may be sent. It returns the result to give the agent
// and false when it may not.
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
		q := Question{Tool: t.Name, Message: auth.redact.string(c.describe(t, req, args, auth)), Call: id.call, Timeout: t.ConfirmTimeout}
		ans = person.Confirm(ctx, q)
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
		return errorResult("NOT SENT: this call to %s waits for a person's confirmation, which the client was asked for. Nothing was sent.", t.Name), false
	}
	return errorResult("NOT SENT: %s.%s", c.redact.string(ans.Why), after), false
}

// describe shows req as the person confirming it reads it: what sends it,
// the request line, the headers and the body, the credentials by name
// (auth's), and the arguments when the body is not shown whole.
func (c *Caller) describe(t *Tool, req *http.Request, args []byte, auth *callAuth) string {
	var b strings.Builder
	fmt.Fprintf(&b, "An agent asks to send this request with %s, a %s tool:\n\n", t.Name, t.Risk.Class)
	fmt.Fprintf(&b, "%s %s\n", req.Method, req.URL.Redacted())
	names := make([]string, 0, len(req.Header))
	for k := range req.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range req.Header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	for _, p := range auth.placements {
		if p.in == "header" {
			fmt.Fprintf(&b, "%s: [the API's credentials, added as it is sent; not shown]\n", p.name)
		} else {
			fmt.Fprintf(&b, "[the API's credentials in %s, added as it is sent; not shown]\n", p.what)
		}
	}
	body, whole := bodyText(req)
	if body != "" {
		b.WriteString("\n" + body + "\n")
	}
	if !whole {
		fmt.Fprintf(&b, "\nThe agent's arguments: %s\n", cut(string(args), maxShown))
	}
	b.WriteString("\nIt is sent only if you accept with \"Send it\" ticked; otherwise nothing is sent.")
	return b.String()
}

// bodyText returns req's body as the person reads it, and whether that is
// all of it: text as it is, cut at maxShown; other content by its size
// and type.
func bodyText(req *http.Request) (string, bool) {
	if req.GetBody == nil || req.ContentLength == 0 {
		return "", true
	}
	r, err := req.GetBody()
	if err != nil {
		return "[the body could not be read back to show it]", false
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return "[the body could not be read back to show it]", false
	}
	ct := req.Header.Get("Content-Type")
	if !textual(ct) || !utf8.Valid(data) {
		return fmt.Sprintf("[a body of %d bytes, %s]", len(data), ct), false
	}
	return cut(string(data), maxShown), len(data) <= maxShown
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
