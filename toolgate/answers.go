package toolgate

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxMedia bounds an answer that is not text (an image, audio, a file):
// such an answer reaches the agent whole, or not at all.
const maxMedia = 1 << 20

// mediaAnswer is an answer that is not text, as read.
type mediaAnswer struct {
	contentType string
	data        []byte // nil when it is withheld
	// size is the bytes read; more is true when there were more than
	// maxMedia, and the answer is withheld.
	size     int
	more     bool
	withheld bool // it holds a secret
	uri      string
}

// readMedia returns the answer resp, whose body's first bytes are data,
// when it is not text: by its media type, or, without one, by its bytes.
// Such an answer is withheld when it is larger than maxMedia, or holds one
// of the secrets red redacts, which cannot be removed from bytes without
// breaking them. It returns nil for text.
func readMedia(resp *http.Response, data []byte, red *redactor) *mediaAnswer {
	ct := resp.Header.Get("Content-Type")
	if isText(ct, data) {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	m := &mediaAnswer{contentType: mt, size: len(data), more: len(data) > maxMedia}
	if resp.Request != nil && resp.Request.URL != nil {
		u := *resp.Request.URL
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, u.User = "", false, "", "", nil
		m.uri = u.String()
	}
	switch {
	case m.more:
	case red.holds(data):
		m.withheld = true
	default:
		m.data = data
	}
	return m
}

// isText reports whether an answer of media type ct whose body starts
// with data is text: by its type, or, for a type that does not say
// (none, or an unknown application/ one), by being UTF-8 without control
// characters.
func isText(ct string, data []byte) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = ""
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.Contains(mt, "json"), strings.Contains(mt, "xml"), strings.Contains(mt, "yaml"),
		strings.Contains(mt, "javascript"), mt == "application/x-www-form-urlencoded", mt == "application/sdp",
		mt == "application/graphql", mt == "application/csv":
		return true
	case mt == "application/octet-stream", strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"),
		strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"), mt == "application/pdf", mt == "application/zip",
		mt == "application/gzip", strings.HasSuffix(mt, "protobuf"), strings.HasPrefix(mt, "multipart/"):
		return false
	case mt != "" && !strings.HasPrefix(mt, "application/"):
		return false
	}
	return readable(data)
}

// readable reports whether data reads as text: UTF-8 without control
// characters other than tabs and line breaks.
func readable(data []byte) bool {
	if !utf8.Valid(data) {
		// A cut may split the last character.
		for i := 1; i < 4 && len(data) > i && !utf8.Valid(data); i++ {
			data = data[:len(data)-1]
		}
		if !utf8.Valid(data) {
			return false
		}
	}
	for _, b := range data {
		if b < ' ' && b != '\t' && b != '\n' && b != '\r' || b == 0x7f {
			return false
		}
	}
	return true
}

// describe says what the answer is, for the agent.
func (m *mediaAnswer) describe() string {
	switch {
	case m.more:
		return fmt.Sprintf("%s of more than %d bytes, more than the %d bytes toolgate passes on of an answer that is not text, so none of it is shown",
			m.contentType, maxMedia, maxMedia)
	case m.withheld:
		return fmt.Sprintf("%s of %d bytes that holds the upstream's credentials, so it is not passed on", m.contentType, m.size)
	}
	return fmt.Sprintf("%s of %d bytes", m.contentType, m.size)
}

// result is the result of a success whose answer m is: the answer as
// MCP gives such content (an image, audio, or an embedded resource with
// its media type), with a line that says what it is.
func (m *mediaAnswer) result(status int) Result {
	text := fmt.Sprintf("The upstream API answered %d %s with %s.", status, http.StatusText(status), m.describe())
	if m.data == nil {
		return Result{Text: text}
	}
	return Result{Text: text, Media: &Media{Type: m.contentType, Data: m.data, URI: m.uri}}
}

// body is what the agent reads of an answer's body: its text, shortened,
// or what it is when it is not text.
func (e ending) body() string {
	if e.media != nil {
		return "[" + e.media.describe() + "]"
	}
	return snippet(e.text)
}
