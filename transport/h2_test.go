package transport_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/rubicon-go/rubicon"
	"github.com/rubicon-go/rubicon/faultserver"
	"github.com/rubicon-go/rubicon/transport"
)

// newH2CClient returns a client that speaks HTTP/2 with prior knowledge to
// http:// URLs.
func newH2CClient(t *testing.T, rec *recorder) *http.Client {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Protocols = new(http.Protocols)
	base.Protocols.SetUnencryptedHTTP2(true)
	opts := transport.Options{Policy: fastPolicy(t, nil)}
	if rec != nil {
		opts.Observe = rec.observe
	}
	tr, err := transport.New(base, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestRefusedStreamIsNotAnEffect: REFUSED_STREAM promises that the server
// did not process the stream, so the POST is sent again (by net/http's
// HTTP/2 client, under rubicon) and applied once.
func TestRefusedStreamIsNotAnEffect(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.RefuseStream), faultserver.OK())
	var rec recorder
	c := newH2CClient(t, &rec)
	resp, err := do(context.Background(), c, "POST", srv.URL()+"/v1/charges", 70<<10)
	if err != nil {
		t.Fatalf("POST after a refused stream: %v", err)
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
		t.Fatalf("got %s %d, want HTTP/2 200", resp.Proto, resp.StatusCode)
	}
	if srv.Effects() != 1 {
		t.Fatalf("effects = %d, want 1", srv.Effects())
	}
	if reqs := srv.Requests(); reqs[0].BodyBytes != 70<<10 {
		t.Fatalf("the server read %d body bytes, want %d", reqs[0].BodyBytes, 70<<10)
	}
}

func TestH2ResetAfterReadIsAmbiguous(t *testing.T) {
	srv := startServer(t, faultserver.Do(faultserver.ResetAfterRead), faultserver.OK())
	var rec recorder
	c := newH2CClient(t, &rec)
	_, err := do(context.Background(), c, "POST", srv.URL()+"/v1/charges", 100)
	var e *rubicon.Error
	if !errors.As(err, &e) || e.Phase != rubicon.Sent || e.Outcome != rubicon.Unknown || e.BytesWritten == 0 {
		t.Fatalf("reset stream after read: %v; want sent, unknown, bytes counted", err)
	}
	if srv.Effects() != 1 || len(rec.all()) != 1 {
		t.Fatalf("%d effects, %d attempts; want 1 and 1", srv.Effects(), len(rec.all()))
	}
	// The connection is still good for a GET, which is retried after the
	// same fault.
	srv.Then(faultserver.Do(faultserver.ResetAfterRead))
	resp, err := do(context.Background(), c, "GET", srv.URL()+"/v1/charges/1", 0)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET after a reset stream: %v", err)
	}
}
