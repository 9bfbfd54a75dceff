package toolgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes bounds one message read over stdio, as the HTTP
// endpoint bounds a request body.
const DefaultMaxMessageBytes = 4 << 20

// StdioTransport serves MCP over a pair of streams (standard input and
// output): one JSON-RPC message per line.
//
// It differs from the SDK's transport where a client depends on it. A line
// that is not a JSON-RPC message is answered with a JSON-RPC error (parse
// error or invalid request) and the session goes on. When the input ends,
// the requests already read are answered before the connection reports the
// end, so a client that writes a request and closes its end at once still
// gets its answer.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxMessageBytes bounds one line; a longer one is answered with an
	// error and skipped. 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Drain bounds how long, once the input has ended, the answers to the
	// requests already read are awaited: the longest tool deadline and
	// some margin. 0 means a minute.
	Drain time.Duration
}

// Connect implements mcp.Transport. It is called once per session.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	drain := t.Drain
	if drain <= 0 {
		drain = time.Minute
	}
	c := &stdioConn{
		r: t.Reader, w: t.Writer, drain: drain,
		incoming: make(chan jsonrpc.Message),
		ended:    make(chan struct{}),
		closed:   make(chan struct{}),
		pending:  map[jsonrpc.ID]bool{},
		answered: make(chan struct{}),
	}
	go c.readLoop(limit)
	return c, nil
}

// stdioConn is one session over the streams. A goroutine reads lines, so
// that Read can return when the connection is closed even while the input
// blocks.
type stdioConn struct {
	r     io.Reader
	w     io.Writer
	drain time.Duration

	writeMu sync.Mutex

	incoming chan jsonrpc.Message // messages read, handed over one by one
	ended    chan struct{}        // closed when the input has ended
	endErr   error                // why: io.EOF, or a read error; set before ended is closed

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // requests read and not yet answered
	answered chan struct{}       // closed, and replaced, at each answer

	closeOnce sync.Once
	closed    chan struct{}
}

// Read returns the next message. Once the input has ended and every
// message read has been handed over, it waits until the requests read are
// answered (at most Drain), then reports the end.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[req.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	case <-c.ended:
		// The reader hands every message over before it closes ended,
		// so nothing read is lost here.
		c.awaitAnswers(ctx)
		return nil, c.endErr
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// awaitAnswers waits until no request read is left unanswered, the drain
// time has passed, or the connection is closed.
func (c *stdioConn) awaitAnswers(ctx context.Context) {
	timer := time.NewTimer(c.drain)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n, answered := len(c.pending), c.answered
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-answered:
		case <-timer.C:
			return
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Write writes one message on its own line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.pending[resp.ID] {
			delete(c.pending, resp.ID)
			close(c.answered)
			c.answered = make(chan struct{})
		}
		c.mu.Unlock()
	}
	return nil
}

func (c *stdioConn) writeLine(data []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close ends the session. A reader that is also a closer is closed, which
// releases a read blocked on it.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if rc, ok := c.r.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}

// SessionID implements mcp.Connection: stdio has one session and no ID.
func (c *stdioConn) SessionID() string { return "" }

// readLoop reads lines until the input ends, answers those that are not
// JSON-RPC messages with an error and hands the others to Read.
func (c *stdioConn) readLoop(limit int) {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, tooLong, err := readLine(br, limit)
		switch {
		case tooLong:
			c.refuse(refusal{nil, jsonrpc.CodeInvalidRequest, "Invalid Request: the message is longer than " + strconv.Itoa(limit) + " bytes"})
		case len(bytes.TrimSpace(line)) > 0:
			msg, r := decodeLine(line)
			if r != nil {
				c.refuse(*r)
			}
			if msg == nil {
				break
			}
			select {
			case c.incoming <- msg:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.endErr = err
			close(c.ended)
			return
		}
	}
}

// readLine reads one line, without its end, of at most limit bytes. A
// longer line is read to its end and dropped (tooLong). At the end of the
// input, a last line without a newline is returned with the error.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the line's end, \r\n
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// A refusal is the error that answers a line that is not a message.
type refusal struct {
	id      any // the line's id if it has a usable one, else nil (null)
	code    int64
	message string
}

// decodeLine decodes one line into a message, or says why it is not one.
// Both are nil for a malformed response: answering it could start an
// exchange of errors with no end.
func decodeLine(line []byte) (jsonrpc.Message, *refusal) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		return nil, &refusal{nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON; send one JSON-RPC message per line"}
	}
	if line[0] == '[' {
		return nil, &refusal{nil, jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not supported; send one JSON-RPC message per line"}
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
	}
	if line[0] != '{' || json.Unmarshal(line, &env) != nil {
		return nil, &refusal{nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message is an object"}
	}
	id := usableID(env.ID)
	isResponse := env.Method == nil
	invalid := func(why string) (jsonrpc.Message, *refusal) {
		if isResponse {
			return nil, nil
		}
		return nil, &refusal{id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + why}
	}
	switch {
	case env.JSONRPC == nil || *env.JSONRPC != "2.0":
		return invalid(`"jsonrpc" must be "2.0"`)
	case env.ID != nil && id == nil:
		return invalid(`"id" must be a string or a number`)
	case !isResponse && (len(env.Method) == 0 || env.Method[0] != '"'):
		return invalid(`"method" must be a string`)
	case isResponse && id == nil:
		return invalid("no id")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return invalid("not a JSON-RPC 2.0 message")
	}
	return msg, nil
}

// usableID returns a request id that a response may repeat (a string or a
// number, as JSON-RPC allows), or nil.
func usableID(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return json.RawMessage(raw) // as the client wrote it
	}
	return nil
}

// refuse answers a line that is not a message. The id is null when the
// line's own cannot be read, as JSON-RPC says.
func (c *stdioConn) refuse(r refusal) {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", r.id, wireError{r.code, r.message}})
	if err == nil {
		c.writeLine(data) // a client that stopped reading is not an error here
	}
}
