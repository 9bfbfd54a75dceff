package provider

import (
	"errors"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/journal"
)

func TestReportClassifiesOutcomes(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want journal.State
	}{
		{nil, journal.Applied},
		{&LocalError{errors.New("read chunk")}, journal.FailedSafe},
		{&rubicon.Error{Phase: rubicon.NotSent, Outcome: rubicon.NotApplied}, journal.FailedSafe},
		{&rubicon.Error{Phase: rubicon.Sent, Outcome: rubicon.Unknown}, journal.Ambiguous},
		{&HTTPError{Provider: "p", Status: 400}, journal.NotApplied},
		{&HTTPError{Provider: "p", Status: 429}, journal.NotApplied},
		{&HTTPError{Provider: "p", Status: 500}, journal.Ambiguous},
		{&HTTPError{Provider: "p", Status: 503}, journal.Ambiguous},
		{&HTTPError{Provider: "p", Method: "POST", Status: 307}, journal.NotApplied},
		{&HTTPError{Provider: "p", Method: "POST", Status: 301}, journal.Ambiguous},
		// Processed, yet no transcript: the money is spent, the result lost.
		{&HTTPError{Provider: "p", Method: "POST", Status: 303}, journal.Ambiguous},
		{&JobError{Provider: "p", ID: "j"}, journal.NotApplied},
		// A poll's refusal says nothing of the accepted job.
		{&AcceptedError{Provider: "p", ID: "j", Err: &HTTPError{Provider: "p", Method: "GET", Status: 404}}, journal.Ambiguous},
		{errors.New("reading the answer: connection reset"), journal.Ambiguous},
	} {
		if got := Report("w", tt.err).To; got != tt.want {
			t.Errorf("Report(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestParseVerboseJSON(t *testing.T) {
	tr, err := ParseVerboseJSON([]byte(`{"text":" hi there ","language":"english","duration":3.5,
		"segments":[{"start":0,"end":1.25,"text":" hi "},{"start":1.25,"end":3.5,"text":"there"}]}`))
	if err != nil || tr.Text != "hi there" || len(tr.Segments) != 2 || tr.Segments[1].Start != 1250*time.Millisecond || tr.Duration != 3500*time.Millisecond {
		t.Fatalf("%+v, %v", tr, err)
	}
	tr, err = ParseVerboseJSON([]byte(`{"text":"no segments","duration":2}`))
	if err != nil || len(tr.Segments) != 1 || tr.Segments[0].End != 2*time.Second {
		t.Fatalf("text without segments: %+v, %v", tr, err)
	}
	if _, err := ParseVerboseJSON([]byte(`not json`)); err == nil {
		t.Fatal("garbage parsed")
	}
}

func TestLimits(t *testing.T) {
	limits := func(name, model string) Limits {
		p, err := New(Options{Name: name, BaseURL: "http://127.0.0.1:1", Model: model})
		if err != nil {
			t.Fatal(err)
		}
		return p.Limits()
	}
	if l := limits("openai", "whisper-1"); l.MaxBytes != 25<<20 || l.MaxDuration != 0 {
		t.Errorf("whisper-1 limits %+v", l)
	}
	if l := limits("openai", "gpt-4o-transcribe"); l.MaxDuration == 0 || l.MaxDuration > 1500*time.Second {
		t.Errorf("gpt-4o-transcribe limits %+v: want under 1,500 s", l)
	}
	if l := limits("deepgram", "nova-3"); l.MaxBytes != 2<<30 {
		t.Errorf("deepgram limits %+v", l)
	}
}
