package faultserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/faultserver"
)

// A script of one fault per connection: the first POST is read and its
// connection reset without an answer, the second is answered. Both reached
// the handler.
func ExampleStart() {
	srv, err := faultserver.Start(faultserver.Do(faultserver.ResetAfterRead), faultserver.Status(201))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range 2 {
		resp, err := client.Post(srv.URL()+"/v1/charges", "application/json", strings.NewReader(`{"amount":500}`))
		if err != nil {
			fmt.Println("no answer")
			continue
		}
		resp.Body.Close()
		fmt.Println("answered", resp.StatusCode)
	}
	fmt.Println("effects:", srv.Effects())
	// Output:
	// no answer
	// answered 201
	// effects: 2
}

// A 429 that asks the client to wait two minutes.
func ExampleRetryAfter() {
	srv, _ := faultserver.Start(faultserver.RetryAfter(http.StatusTooManyRequests, 2*time.Minute))
	defer srv.Close()
	resp, err := http.Get(srv.URL())
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	// Output:
	// 429 120
}

// Nothing listens while a Refuse step lasts; the test reports the refusal
// and the script moves on.
func ExampleServer_Refused() {
	srv, _ := faultserver.Start(faultserver.Do(faultserver.Refuse))
	defer srv.Close()
	_, err := http.Get(srv.URL())
	fmt.Println("refused:", err != nil, srv.Refusing())
	srv.Refused()
	resp, err := http.Get(srv.URL())
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("then:", resp.StatusCode, "effects:", srv.Effects())
	// Output:
	// refused: true true
	// then: 200 effects: 1
}

// A kept-alive answer lets the client reuse its connection; the next
// request on it takes the next step, here a close after reading, which
// net/http answers by sending a GET again on a new connection.
func ExampleStep_keepAlive() {
	kept := faultserver.OK()
	kept.KeepAlive = true
	srv, _ := faultserver.Start(kept, faultserver.Do(faultserver.CloseAfterRead))
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for range 2 {
		resp, err := client.Get(srv.URL() + "/v1/orders")
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	fmt.Println("connections:", srv.Accepted(), "requests:", len(srv.Requests()))
	// Output:
	// connections: 2 requests: 3
}
