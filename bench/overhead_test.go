package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// callTimeout is the deadline of the "_deadline" variants: long enough
// never to fire, so that only its bookkeeping is measured.
const callTimeout = 30 * time.Second

// sender sends one request with the given body (nil for none) and reads
// the whole response.
type sender func(b *testing.B, method string, body []byte)

// clientSender sends through c; with a timeout, each request runs under a
// context with that timeout, as a caller with a deadline would write it.
func clientSender(c *http.Client, timeout time.Duration) sender {
	return keyedSender(c, timeout, false)
}

// keyedSender is clientSender; with keyed, each request carries an
// Idempotency-Key of its own, as stripe-go puts on every POST.
func keyedSender(c *http.Client, timeout time.Duration, keyed bool) sender {
	var n int
	return func(b *testing.B, method string, body []byte) {
		ctx := context.Background()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		req, err := http.NewRequestWithContext(ctx, method, serverURL, reader(body))
		if err != nil {
			b.Fatal(err)
		}
		if keyed {
			n++
			req.Header.Set("Idempotency-Key", "key-"+strconv.Itoa(n))
		}
		resp, err := c.Do(req)
		consume(b, resp, err)
	}
}

func newBare() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// newRubicon returns a client over rubicon's transport; a deadline puts it
// in the policy, where rubicon enforces it over every attempt.
func newRubicon(deadline time.Duration) *http.Client {
	cfg := retry.DefaultConfig()
	cfg.Deadline = deadline
	t, err := transport.New(http.DefaultTransport.(*http.Transport).Clone(), transport.Options{Policy: retry.MustNew(cfg)})
	if err != nil {
		panic(err)
	}
	return &http.Client{Transport: t}
}

func retryable() sender {
	c := retryablehttp.NewClient()
	c.Logger = nil
	c.HTTPClient.Transport = http.DefaultTransport.(*http.Transport).Clone()
	return func(b *testing.B, method string, body []byte) {
		var rb any
		if body != nil {
			rb = bytes.NewReader(body)
		}
		req, err := retryablehttp.NewRequest(method, serverURL, rb)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := c.Do(req)
		consume(b, resp, err)
	}
}

func reader(body []byte) io.Reader {
	if body == nil {
		return nil
	}
	return bytes.NewReader(body)
}

func consume(b *testing.B, resp *http.Response, err error) {
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

var clients = []struct {
	name string
	new  func() sender
}{
	{"bare", func() sender { return clientSender(newBare(), 0) }},
	{"rubicon", func() sender { return clientSender(newRubicon(0), 0) }},
	{"retryablehttp", retryable},
	{"bare_deadline", func() sender { return clientSender(newBare(), callTimeout) }},
	{"rubicon_deadline", func() sender { return clientSender(newRubicon(callTimeout), 0) }},
}

func benchmark(b *testing.B, method string, body []byte) { run(b, clients, method, body) }

func run(b *testing.B, clients []struct {
	name string
	new  func() sender
}, method string, body []byte) {
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			send := c.new()
			send(b, method, body) // open the connection before timing
			b.ReportAllocs()
			if body != nil {
				b.SetBytes(int64(len(body)))
			}
			cpu := processCPU()
			for b.Loop() {
				send(b, method, body)
			}
			if cpu := processCPU() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkGET measures a GET with a two-byte answer on a kept-alive
// loopback connection.
func BenchmarkGET(b *testing.B) { benchmark(b, "GET", nil) }

// BenchmarkPOST64K measures a POST with a 64 KiB body.
func BenchmarkPOST64K(b *testing.B) { benchmark(b, "POST", bytes.Repeat([]byte("a"), 64<<10)) }

// BenchmarkPOST64KIdempotencyKey measures a 64 KiB POST that carries an
// Idempotency-Key without being opted in, as every POST of stripe-go
// does: rubicon keeps it on its kept-alive connection, as bare net/http
// does.
func BenchmarkPOST64KIdempotencyKey(b *testing.B) {
	keyed := []struct {
		name string
		new  func() sender
	}{
		{"bare", func() sender { return keyedSender(newBare(), 0, true) }},
		{"rubicon", func() sender { return keyedSender(newRubicon(0), 0, true) }},
	}
	run(b, keyed, "POST", bytes.Repeat([]byte("a"), 64<<10))
}
