package provider_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/provider"
)

// chunk is a chunk of a few bytes; the servers here do not decode it.
func chunk(t *testing.T) provider.Chunk {
	path := filepath.Join(t.TempDir(), "c.mp3")
	if err := os.WriteFile(path, []byte("not really audio"), 0o600); err != nil {
		t.Fatal(err)
	}
	return provider.Chunk{Key: "transcribe/abc/0", Path: path, Size: 16, Duration: time.Second}
}

func start(t *testing.T, steps ...faultserver.Step) *faultserver.Server {
	srv, err := faultserver.Start(steps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func newProvider(t *testing.T, o provider.Options) *provider.Provider {
	p, err := provider.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPaidRequestIsNeverSentTwice: whatever goes wrong once the paid
// request was sent, the provider's client does not send it again, and the
// outcome is ambiguous.
func TestPaidRequestIsNeverSentTwice(t *testing.T) {
	for _, step := range []faultserver.Step{
		faultserver.Do(faultserver.ResetAfterRead),
		faultserver.Do(faultserver.CloseAfterRead),
		faultserver.Status(http.StatusServiceUnavailable),
		faultserver.Status(http.StatusBadGateway),
	} {
		t.Run(step.String(), func(t *testing.T) {
			srv := start(t, step)
			p := newProvider(t, provider.Options{Name: "openai", BaseURL: srv.URL(), Model: "whisper-1"})
			_, err := p.Transcribe(context.Background(), chunk(t))
			if rep := provider.Report("w", err); rep.To != journal.Ambiguous {
				t.Fatalf("after %s: %v, reported %s; want ambiguous", step, err, rep.To)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("after %s the server read %d requests, want 1", step, n)
			}
		})
	}
}

// TestEveryRequestOfAPaidCallIsSentOnce: a poll in the middle of a paid
// request is no freer than the request: a 503 to it, which a plain client
// retries for a GET, ends the call, and the job is ambiguous.
func TestEveryRequestOfAPaidCallIsSentOnce(t *testing.T) {
	srv := start(t,
		faultserver.Step{Body: `{"upload_url":"https://cdn.example/u/1"}`},
		faultserver.Step{Body: `{"id":"job-1","status":"queued"}`},
		faultserver.Status(http.StatusServiceUnavailable),
	)
	srv.SetDefault(faultserver.Step{Body: `{"id":"job-1","status":"completed","text":"hi"}`})
	p := newProvider(t, provider.Options{Name: "assemblyai", BaseURL: srv.URL(), Model: "best", PollEvery: time.Millisecond})
	_, err := p.Transcribe(context.Background(), chunk(t))
	var ae *provider.AcceptedError
	if !errors.As(err, &ae) || provider.Report("w", err).To != journal.Ambiguous {
		t.Fatalf("a poll answered 503: %v; want the accepted job ambiguous", err)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	if got := strings.Join(paths, ", "); got != "POST /v2/upload, POST /v2/transcript, GET /v2/transcript/job-1" {
		t.Fatalf("requests: %s; want the poll sent once", got)
	}
}

// TestTimeoutBoundsThePaidRequest: a provider that never answers holds the
// request for the provider's timeout, not more; the outcome is ambiguous.
func TestTimeoutBoundsThePaidRequest(t *testing.T) {
	srv := start(t, faultserver.Do(faultserver.Hang))
	p := newProvider(t, provider.Options{Name: "openai", BaseURL: srv.URL(), Model: "whisper-1", Timeout: 300 * time.Millisecond})
	began := time.Now()
	_, err := p.Transcribe(context.Background(), chunk(t))
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("the request took %s with a 300ms timeout", took)
	}
	if rep := provider.Report("w", err); rep.To != journal.Ambiguous || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request past its timeout: %v, reported %s; want ambiguous", err, rep.To)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("the server read %d requests, want 1", n)
	}
}

// TestLookupsAreReads: a look-up has no effect, so its client retries it
// as any read; only the sandbox keeps records to ask.
func TestLookupsAreReads(t *testing.T) {
	srv := start(t, faultserver.Status(http.StatusServiceUnavailable))
	srv.SetDefault(faultserver.Step{Body: `{"charges":[{"request_id":"req_1","amount_micro_usd":100,"transcript":{"text":"hi"}}]}`})
	p := newProvider(t, provider.Options{Name: "sandbox", BaseURL: srv.URL(), Model: "whisper-1"})
	found, err := p.Lookup(context.Background(), "transcribe/abc/0", nil)
	if err != nil || !found.Charged || found.RequestID != "req_1" || found.Transcript == nil || found.Transcript.Text != "hi" {
		t.Fatalf("look-up after a 503: %+v, %v; want the charge, asked again", found, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("the server read %d look-ups, want 2", n)
	}
	openai := newProvider(t, provider.Options{Name: "openai", BaseURL: srv.URL(), Model: "whisper-1"})
	if !p.KeepsRecords() || openai.KeepsRecords() {
		t.Fatal("only the sandbox keeps records to ask")
	}
	if _, err := openai.Lookup(context.Background(), "k", nil); err == nil {
		t.Fatal("a look-up at a provider without records succeeded")
	}
}

func TestNewRefusesWhatItCannotReach(t *testing.T) {
	for _, o := range []provider.Options{
		{Name: "whisperer", BaseURL: "http://127.0.0.1:1", Model: "m"},
		{Name: "openai", Model: "whisper-1"},
		{Name: "openai", BaseURL: "http://127.0.0.1:1"},
	} {
		if _, err := provider.New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	_, err := provider.New(provider.Options{Name: "whisperer", BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err == nil || !strings.Contains(err.Error(), `"whisperer"`) || !strings.Contains(err.Error(), "sandbox, openai, groq, whispercpp, localai, speaches, deepgram, assemblyai") {
		t.Fatalf("unknown provider: %v; want its name and the known ones", err)
	}
}
