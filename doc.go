// Package rubicon holds the vocabulary shared by every part of rubicon: the
// phase a failed attempt reached, the outcome of an operation, and the error
// that says whether a request may have been applied.
//
// rubicon's one rule is that an automatic retry never crosses the side-effect
// boundary, the moment the first byte of a side-effecting request leaves the
// process. A failure before the boundary ([NotSent]) provably did nothing and
// may be retried freely. A failure after it ([Sent]) of a request that is not
// idempotent has an [Unknown] outcome: the operation is ambiguous and is handed
// to a person, or to a look-up at the provider, instead of being sent again.
//
// The package does no I/O. The retry decisions live in package retry, the
// boundary-aware http.RoundTripper in package transport.
package rubicon
