package bench

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/rubicon-go/rubicon/retry"
	"github.com/rubicon-go/rubicon/transport"
)

// sender sends one request with the given body (nil for none) and reads
// the whole response.
type sender func(b *testing.B, method string, body []byte)

func bare() sender {
	return clientSender(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()})
}

// clientSender sends through an *http.Client.
func clientSender(c *http.Client) sender {
	return func(b *testing.B, method string, body []byte) {
		req, err := http.NewRequest(method, serverURL, reader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp, err := c.Do(req)
		consume(b, resp, err)
	}
}

func withRubicon(deadline time.Duration) sender {
	cfg := retry.DefaultConfig()
	cfg.Deadline = deadline
	t, err := transport.New(http.DefaultTransport.(*http.Transport).Clone(), transport.Options{Policy: retry.MustNew(cfg)})
	if err != nil {
		panic(err)
	}
	return clientSender(&http.Client{Transport: t})
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
	{"bare", bare},
	{"rubicon", func() sender { return withRubicon(0) }},
	{"rubicon_deadline", func() sender { return withRubicon(30 * time.Second) }},
	{"retryablehttp", retryable},
}

func benchmark(b *testing.B, method string, body []byte) {
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			send := c.new()
			send(b, method, body) // open the connection before timing
			b.ReportAllocs()
			if body != nil {
				b.SetBytes(int64(len(body)))
			}
			for b.Loop() {
				send(b, method, body)
			}
		})
	}
}

// BenchmarkGET measures a GET with a two-byte answer on a kept-alive
// loopback connection.
func BenchmarkGET(b *testing.B) { benchmark(b, "GET", nil) }

// BenchmarkPOST64K measures a POST with a 64 KiB body.
func BenchmarkPOST64K(b *testing.B) { benchmark(b, "POST", bytes.Repeat([]byte("a"), 64<<10)) }
