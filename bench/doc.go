// Package bench compares rubicon's transport with bare net/http and with
// hashicorp/go-retryablehttp: success-path overhead per request, and what
// each does to a side effect when the same faults are injected. It is a
// module of its own so that the comparison's dependencies never reach the
// library's users.
//
//	go test -run '^$' -bench . -benchmem -count 6   # overhead
//	go test -run TestBehaviourTable -v              # duplicate effects
package bench
