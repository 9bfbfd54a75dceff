// Package retry makes rubicon's retry decisions. It does no I/O and keeps no
// clock of its own: callers pass in the time, the failure and a random
// number, and get back whether to try again and how long to wait first.
//
// The defaults follow one rule: an automatic retry never crosses the
// side-effect boundary. A request that reached no wire is always safe to try
// again. After bytes were written, only the safe methods (GET, HEAD,
// OPTIONS, TRACE) are retried, unless the operation opted in to retries with
// an idempotency key ([OptedIn]); PUT, POST, PATCH, DELETE and any other
// method stop, and the caller learns that the outcome is unknown.
//
//	failure                     GET HEAD OPTIONS TRACE   other methods   opted in
//	not sent                    retry                    retry           retry
//	sent, no answer             retry                    stop            retry
//	408 429 502 503 504         retry                    stop            retry
//	other status                stop                     stop            stop
//
// Waits are exponential with full jitter, capped, and honour the server's
// Retry-After (seconds or HTTP-date) and retry-after-ms. A wait that does not
// fit before the deadline is not taken: the decision stops at once and
// carries the wait the server asked for. A [Budget] limits retries to a share
// of the traffic so that an outage does not multiply the load.
//
// [Outcome] is rubicon's one rule for what an answer proves about a
// request's effect (applied, not applied, unknown), from the method, the
// operation's mode, how far the attempt got, the status and what the API
// declares. The transport, the journal and the products all ask it.
// Retry-After changes when a retry may happen, never what the answer proved.
// The package does no I/O; it uses the root package's vocabulary (Phase,
// Outcome) and nothing else of rubicon's.
package retry
