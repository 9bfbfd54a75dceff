// Package journal records side-effecting operations durably, before their
// request goes out, so that a crash can only ever leave an ambiguous record,
// never a silent second purchase.
//
// Each operation has a stable key, unique per logical side effect, and
// moves through this state machine:
//
//	pending ──pre-boundary failure──> failed_safe ──RetrySafe──> pending
//	   │
//	   └─Send (durable commit)─> sending ──answer: success──────> applied
//	                               │      ──answer: definitive no─> not_applied ──RetrySafe──> pending
//	                               │      ──not sent (proven)─────> failed_safe
//	                               │      ──sent, no answer───────> ambiguous
//	                               └─worker died (lease expired)──> ambiguous
//	ambiguous ──Resolve (a person, or the provider's answer)──> applied | not_applied
//	ambiguous ──Record (the late answer of its sender)─────────> applied | not_applied
//
// Send commits the sending state before the caller writes a byte of the
// request. A worker that dies after that leaves its operation in sending
// with a lease that runs out; [Journal.Recover] then makes it ambiguous, and
// it is never handed out again. A worker that dies before Send leaves a
// pending operation whose lease runs out, and which [Journal.Claim] hands
// out again, since nothing was sent.
//
// Leases are kept when processes freeze, clocks disagree and names
// repeat. A lease is held by a worker through one Journal (its random
// instance id), so that processes given the same name never act on each
// other's leases. Every lease is judged by the store's clock ([Clock]),
// never by a worker's. A sending commit returns the request's deadline on
// the sender's monotonic clock, within its lease ([Operation.Deadline]):
// sent under [Operation.Fence], a request never starts once its lease is
// over, so that a worker that wakes from a pause after recovery made its
// operation ambiguous sends nothing. Its answer, if one came before, is
// kept: [Journal.Record] settles the ambiguous operation with it. And an
// operation is resolved as not applied only once the lease it was sent
// under is over ([Journal.Resolve]).
//
// Every transition is appended to an audit log that is never updated or
// deleted. A transition the state machine does not allow is an error
// ([ErrIllegalTransition]), never a silent no-op.
//
// The journal keeps its data in a [Store]; package sqlstore provides one
// for SQLite and PostgreSQL. The methods ending in Tx run inside a
// transaction the caller opened, so that, for example, a budget hold and the
// sending transition commit together.
package journal
