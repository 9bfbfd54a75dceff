package faultserver

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// A client that speaks HTTP/2 with prior knowledge (h2c) gets a minimal
// HTTP/2 server: each stream, not each connection, takes the next step, and
// RefuseStream answers with RST_STREAM REFUSED_STREAM, which promises the
// client that the request was not processed.

// h2Stream is a request being read on an HTTP/2 connection.
type h2Stream struct {
	step   Step
	method string
	path   string
	header http.Header
	body   int64
}

// h2Conn serves one HTTP/2 connection. Frames are read by one goroutine;
// writes, which delayed answers make from others, share a lock.
type h2Conn struct {
	s       *Server
	c       net.Conn
	fr      *http2.Framer
	wmu     sync.Mutex
	streams map[uint32]*h2Stream
	first   *Step // the step taken when the connection was accepted
}

// isH2Preface reports whether br starts with the HTTP/2 client preface.
func isH2Preface(br *bufio.Reader) bool {
	p, err := br.Peek(len(http2.ClientPreface))
	return err == nil && string(p) == http2.ClientPreface
}

func (s *Server) serveH2(c net.Conn, br *bufio.Reader, first Step) {
	if _, err := io.ReadFull(br, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	h := &h2Conn{s: s, c: c, fr: http2.NewFramer(c, br), streams: make(map[uint32]*h2Stream), first: &first}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if h.write(func() error { return h.fr.WriteSettings() }) != nil {
		return
	}
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				h.write(h.fr.WriteSettingsAck)
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				h.write(func() error { return h.fr.WritePing(true, f.Data) })
			}
		case *http2.MetaHeadersFrame:
			if !h.headers(f) {
				return
			}
		case *http2.DataFrame:
			if !h.data(f) {
				return
			}
		case *http2.GoAwayFrame:
			return
		}
	}
}

func (h *h2Conn) write(fn func() error) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return fn()
}

// headers starts a stream; it reports false when the connection must end.
func (h *h2Conn) headers(f *http2.MetaHeadersFrame) bool {
	var step Step
	if h.first != nil {
		step, h.first = *h.first, nil
	} else {
		h.s.mu.Lock()
		step = h.s.currentLocked()
		h.s.consumeLocked()
		h.s.mu.Unlock()
	}
	id := f.StreamID
	if step.Fault == RefuseStream {
		return h.write(func() error { return h.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) }) == nil
	}
	st := &h2Stream{step: step, method: f.PseudoValue("method"), path: f.PseudoValue("path"), header: make(http.Header)}
	for _, hf := range f.RegularFields() {
		st.header.Add(hf.Name, hf.Value)
	}
	h.streams[id] = st
	if f.StreamEnded() {
		return h.finish(id)
	}
	return true
}

func (h *h2Conn) data(f *http2.DataFrame) bool {
	// Return the flow-control credit of every DATA frame, including those
	// of refused streams, so the client's windows never close.
	if n := f.Header().Length; n > 0 {
		st := h.streams[f.StreamID]
		if h.write(func() error {
			if err := h.fr.WriteWindowUpdate(0, n); err != nil {
				return err
			}
			if st != nil {
				return h.fr.WriteWindowUpdate(f.StreamID, n)
			}
			return nil
		}) != nil {
			return false
		}
	}
	st, ok := h.streams[f.StreamID]
	if !ok {
		return true
	}
	st.body += int64(len(f.Data()))
	if f.StreamEnded() {
		return h.finish(f.StreamID)
	}
	return true
}

// finish records the whole request as an effect and plays its step.
func (h *h2Conn) finish(id uint32) bool {
	st := h.streams[id]
	delete(h.streams, id)
	path := st.path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	h.s.record(Request{Method: st.method, Path: path, Header: st.header, BodyBytes: st.body, Fault: st.step.Fault, Status: st.step.answered()})
	h.s.advance()
	switch st.step.Fault {
	case ResetAfterRead:
		return h.write(func() error { return h.fr.WriteRSTStream(id, http2.ErrCodeInternal) }) == nil
	case CloseAfterRead:
		reset(h.c)
		return false
	case Hang:
		return true
	}
	if st.step.Delay > 0 {
		go func() {
			time.Sleep(st.step.Delay)
			h.answer(id, st.step)
		}()
		return true
	}
	return h.answer(id, st.step) == nil
}

func (h *h2Conn) answer(id uint32, step Step) error {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(step.status())})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(step.Body))})
	for k, vs := range step.Header {
		for _, v := range vs {
			enc.WriteField(hpack.HeaderField{Name: strings.ToLower(k), Value: v})
		}
	}
	return h.write(func() error {
		if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: step.Body == ""}); err != nil {
			return err
		}
		if step.Body != "" {
			return h.fr.WriteData(id, true, []byte(step.Body))
		}
		return nil
	})
}
