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
// which case every attempt carries the same Idempotency-Key. What each
// answer proves about the request's effect is decided by [retry.Outcome],
// the one rule that the journal and the products use too.
//
// # Responses and errors
//
// As the http.RoundTripper contract requires, RoundTrip returns the
// response whenever a response ended the call, whatever its status, and an
// error only when none did: a call that stops without a usable response
// returns a *rubicon.Error that says whether the request may have been
// applied. That holds when the transport stops because the server asked for
// a longer wait (Retry-After, retry-after-ms) than the policy allows or the
// deadline leaves: the caller gets the 429 or 503 as the server sent it,
// and learns that the transport gave up on it through [WithReport], whose
// Report.Err is then a *rubicon.Error carrying the requested wait
// (RetryAfter), the outcome the answer proves, and the reason. Report.Err
// is set for every call whose outcome is not applied, so a caller that
// prefers errors for such answers, through an http.Client, reads it:
//
//	var rep transport.Report
//	resp, err := client.Do(req.WithContext(transport.WithReport(ctx, &rep)))
//	if err == nil && rep.Err != nil {
//		// resp is the server's refusal or failure; rep.Err says what it
//		// proves and how long the server asked to wait.
//	}
//
// [Options.Observe] sees the same per attempt.
//
// Attempts count requests sent, net/http's own included: net/http sends a
// request again by itself, on a fresh connection, when a reused connection
// fails after an idempotent (or Idempotency-Key) request was written; the
// server may have received both, and rubicon counts both.
//
// # Deadlines as fences
//
// A request is never started after its context's deadline, whether or not
// the context's timer has fired: the Transport checks the deadline before
// each attempt and, on HTTP/1, again right before the first byte of the
// request is written on the connection (on HTTP/2, where streams share a
// connection, only before the attempt). A process that was stopped or
// paused after it took a connection wakes up to an attempt that is not
// sent, and to an error that says so. A caller that holds a lease (see
// package journal) sends under a context whose deadline is the lease's end,
// so that nothing is sent once another worker may have taken the lease
// over.
//
// The proofs need the base RoundTripper to be an *http.Transport (or nil,
// for a clone of http.DefaultTransport); the Transport works on a clone of
// it with a counting dialer. Any other base is treated as if every failed
// attempt may have been sent.
package transport
