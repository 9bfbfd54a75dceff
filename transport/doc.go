// Package transport provides rubicon's boundary-aware http.RoundTripper.
//
// For every attempt the [Transport] proves whether any byte of the request
// reached the wire: its own dialer counts the bytes written on each
// connection, and an httptrace hook sees which connection the attempt got.
// No connection, or no byte written on the one it got, means the attempt was
// not sent, and retrying it is provably safe, whatever the method.
//
// Once a request was sent, the retry decision follows package retry: safe
// methods are retried; PUT, POST, PATCH, DELETE and other methods are not,
// unless the operation opted in ([Operation], [WithIdempotencyKey]), in
// which case every attempt carries the same Idempotency-Key. A call that
// stops without a usable response returns a *rubicon.Error that says
// whether the request may have been applied. A response is returned as the
// server sent it.
//
// The proofs need the base RoundTripper to be an *http.Transport (or nil,
// for a clone of http.DefaultTransport); the Transport works on a clone of
// it with a counting dialer. Any other base is treated as if every failed
// attempt may have been sent.
package transport
