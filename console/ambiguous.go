package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
)

// Work describes a product's ambiguous operations, and how a person
// settles one.
type Work struct {
	// Kind is the journal kind of the product's operations.
	Kind string
	// Noun names one operation in the product's words: "call", "request".
	Noun string
	// Applied and NotApplied say what each decision means for the
	// product, beside the choice on the form.
	Applied, NotApplied string
	// Check says how a person finds out the truth, above the form.
	Check string
	// Describe says in a line what an operation did; nil shows its
	// subject.
	Describe func(op journal.Operation) string
	// Fields are more inputs of the settle form, such as a transcript.
	Fields []Field
	// Resolve settles an operation with the person's decision and the
	// form they sent, and returns the operation settled; nil settles it
	// in the journal (Journal.Resolve). Its errors are shown to the
	// person as they are.
	Resolve func(ctx context.Context, key string, res journal.Resolution, f *Form) (journal.Operation, error)
}

// Field is one more input of the settle form.
type Field struct {
	// Name is the input's name, for [Form.Value] and [Form.File].
	Name        string
	Label, Help string
	// File makes the input a file upload.
	File bool
}

// Form is a settle form as the person sent it.
type Form struct{ r *http.Request }

// Value returns the value of the input name, trimmed.
func (f *Form) Value(name string) string { return strings.TrimSpace(f.r.PostFormValue(name)) }

// File returns the content and the name of the file sent in the input
// name, or nil content and no error when none was sent.
func (f *Form) File(name string) ([]byte, string, error) {
	if f.r.MultipartForm == nil || len(f.r.MultipartForm.File[name]) == 0 {
		return nil, "", nil
	}
	h := f.r.MultipartForm.File[name][0]
	if h.Size == 0 && h.Filename == "" {
		return nil, "", nil
	}
	file, err := h.Open()
	if err != nil {
		return nil, h.Filename, err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	return data, h.Filename, err
}

// maxUpload bounds a settle form that carries files.
const maxUpload = 64 << 20

// opView is an operation as the pages show it.
type opView struct {
	journal.Operation
	What string
	// Sent is when it was last sent, as the audit log has it.
	Sent                                         time.Time
	BytesWritten, Status, RequestID, Arguments   string
	More                                         []evidenceItem
	History                                      []journal.Entry
	ResolvedAt, ResolvedBy, ResolvedNote, Result string
}

type evidenceItem struct{ Name, Value string }

// shown are the evidence items the pages show in their own columns.
var shown = map[string]bool{"bytes_written": true, "status": true, "provider_request_id": true, "arguments": true}

// view makes op's view, with its history.
func (s *Server) view(ctx context.Context, op journal.Operation) (opView, error) {
	v := opView{Operation: op, What: op.Subject}
	if d := s.opts.Work.Describe; d != nil {
		v.What = d(op)
	}
	hist, err := s.opts.Journal.History(ctx, op.Key)
	if err != nil {
		return v, err
	}
	v.History = hist
	for _, e := range hist {
		if e.To == journal.Sending {
			v.Sent = e.At
		}
	}
	ev := op.Evidence
	v.BytesWritten, v.Status, v.RequestID, v.Arguments = text(ev["bytes_written"]), text(ev["status"]), text(ev["provider_request_id"]), text(ev["arguments"])
	names := make([]string, 0, len(ev))
	for k := range ev {
		if !shown[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		v.More = append(v.More, evidenceItem{k, text(ev[k])})
	}
	return v, nil
}

// text writes an evidence value as a person reads it: text as it is,
// whole numbers without a decimal point, anything else as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ambiguousData is what the list of ambiguous work shows.
type ambiguousData struct {
	Work Work
	Ops  []opView
	Cut  bool
}

// maxListed bounds the list of ambiguous operations on one page.
const maxListed = 500

// ambiguous lists the ambiguous operations, oldest first.
func (s *Server) ambiguous(w http.ResponseWriter, r *http.Request) {
	ops, err := s.opts.Journal.List(r.Context(), journal.Filter{Kind: s.opts.Work.Kind, States: []journal.State{journal.Ambiguous}, Limit: maxListed + 1})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := ambiguousData{Work: s.opts.Work, Cut: len(ops) > maxListed}
	for _, op := range ops[:min(len(ops), maxListed)] {
		v, err := s.view(r.Context(), op)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		d.Ops = append(d.Ops, v)
	}
	Render(w, r, http.StatusOK, "Ambiguous "+s.opts.Work.Noun+"s", s.pages, "ambiguous", d)
}

// operationData is what an operation's page shows.
type operationData struct {
	Work    Work
	Op      opView
	Who     string
	Problem string
	// What the form held when it was refused.
	Outcome, Note, Name string
	Multipart           bool
}

// operation shows one operation: its evidence, its history, and the form
// to settle it while it is ambiguous.
func (s *Server) operation(w http.ResponseWriter, r *http.Request) {
	s.showOperation(w, r, http.StatusOK, operationData{}, r.URL.Query().Get("key"))
}

func (s *Server) showOperation(w http.ResponseWriter, r *http.Request, status int, d operationData, key string) {
	op, err := s.opts.Journal.Get(r.Context(), key)
	if errors.Is(err, journal.ErrNotFound) {
		Fail(w, r, http.StatusNotFound, fmt.Sprintf("The journal has no %s with key %q.", s.opts.Work.Noun, key))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Op, err = s.view(r.Context(), op); err != nil {
		s.fail(w, r, err)
		return
	}
	d.Work, d.Who = s.opts.Work, Who(r)
	for _, f := range s.opts.Work.Fields {
		d.Multipart = d.Multipart || f.File
	}
	Render(w, r, status, strings.ToUpper(s.opts.Work.Noun[:1])+s.opts.Work.Noun[1:]+" "+op.Key, s.pages, "operation", d)
}

// settle records a person's decision about an ambiguous operation.
func (s *Server) settle(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(8 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d MiB.", maxUpload>>20))
			return
		}
		Fail(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	f := &Form{r}
	key := r.PostFormValue("key")
	d := operationData{Outcome: f.Value("outcome"), Note: f.Value("note"), Name: f.Value("name")}
	res := journal.Resolution{By: Who(r), Note: d.Note, Evidence: journal.Evidence{"through": s.opts.Product + " console"}}
	if res.By == "" {
		res.By = d.Name
	}
	switch d.Outcome {
	case "applied":
		res.To = journal.Applied
	case "not_applied":
		res.To = journal.NotApplied
	}
	switch {
	case res.To == "" || d.Note == "":
		d.Problem = "Say whether it was applied or not, and in the note what you checked."
	case !goodName(res.By):
		d.Problem = "Give your name: the journal records who settles what. Letters, digits, spaces and . _ @ - only, up to 80 characters."
	}
	if d.Problem != "" {
		s.showOperation(w, r, http.StatusBadRequest, d, key)
		return
	}
	var op journal.Operation
	if s.opts.Work.Resolve != nil {
		op, err = s.opts.Work.Resolve(r.Context(), key, res, f)
	} else {
		op, err = s.opts.Journal.Resolve(r.Context(), key, res)
	}
	switch {
	case errors.Is(err, journal.ErrNotFound):
		Fail(w, r, http.StatusNotFound, fmt.Sprintf("The journal has no %s with key %q.", s.opts.Work.Noun, key))
		return
	case err != nil:
		status := http.StatusUnprocessableEntity
		if errors.Is(err, journal.ErrIllegalTransition) {
			status = http.StatusConflict
		}
		d.Problem = err.Error()
		s.showOperation(w, r, status, d, key)
		return
	}
	s.metrics.settled.WithLabelValues(string(op.State)).Inc()
	s.log.Info("settled", "key", key, "outcome", string(op.State), "by", res.By)
	http.Redirect(w, r, "/operation?key="+url.QueryEscape(key), http.StatusSeeOther)
}

// fail reports an error of the console's own, such as the journal's.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("request failed", "path", r.URL.Path, "err", err)
	Fail(w, r, http.StatusInternalServerError, "The journal could not be read: "+err.Error())
}
