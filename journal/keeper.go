package journal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// RenewError reports renewals of leases that failed for another reason
// than the lease being lost: the store could not be reached, a lock was
// held too long.
type RenewError struct {
	Worker string
	Keys   []string
	// Failures counts the renewals that failed.
	Failures int
	// Lost is set when no renewal succeeded while the leases lasted: they
	// may have run out, and the worker must start no request under them.
	Lost bool
	// Err is the last failure.
	Err error
}

// Error says what failed, how often, and what it means for the leases.
func (e *RenewError) Error() string {
	keys := strings.Join(e.Keys, ", ")
	if e.Lost {
		return fmt.Sprintf("worker %q could not renew its lease on %s (%d tries failed, the last: %v): the lease may have run out, so nothing more is sent under it", e.Worker, keys, e.Failures, e.Err)
	}
	return fmt.Sprintf("renewing worker %q's lease on %s failed %d times (the last: %v), and was tried again in time", e.Worker, keys, e.Failures, e.Err)
}

// Unwrap returns the last failure.
func (e *RenewError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLeaseLost) true when the leases were lost.
func (e *RenewError) Is(target error) bool { return e.Lost && target == ErrLeaseLost }

// retryPause is the longest pause before a failed renewal is tried again;
// a lease shorter than ten of them pauses a tenth of the lease.
const retryPause = time.Second

// KeepLeases renews worker's leases on keys in the background, every third
// of the lease, until stop is called or ctx ends, and returns a context
// that lasts as long as the leases are held: work on the operations goes
// on under it, and the worker must not start sending once it is done. Use
// it around work that may outlast a lease, such as converting an upload.
//
// A renewal that fails for a passing reason (a connection lost, a lock
// held too long) is tried again, after a pause of up to a second (a tenth
// of a shorter lease), for as long as the last renewal lasts on this
// process's monotonic clock (the first lease counted from the call, which
// follows the claim). held ends, with
// the reason as its cause ([context.Cause]), when a lease is lost (a
// *LeaseError) or when renewals kept failing until the leases could have
// run out (a *RenewError with Lost set).
//
// stop ends the renewals and returns nil if every renewal succeeded, the
// *LeaseError of a lost lease, or a *RenewError that says how many
// renewals failed and whether they were made good in time (Lost).
func (j *Journal) KeepLeases(ctx context.Context, worker string, keys ...string) (held context.Context, stop func() error) {
	held, cancel := context.WithCancelCause(ctx)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		until := fence(start, j.lease)
		var failures int
		var last error
		ended := func() error {
			if failures == 0 {
				return nil
			}
			return &RenewError{Worker: worker, Keys: keys, Failures: failures, Err: last}
		}
		wait := j.lease / 3
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case <-held.Done():
				done <- ended()
				return
			case <-timer.C:
			}
			try := time.Now()
			err := j.Renew(held, worker, keys...)
			switch {
			case err == nil:
				until, wait = fence(try, j.lease), j.lease/3
			case held.Err() != nil: // stopped meanwhile
				done <- ended()
				return
			case errors.Is(err, ErrLeaseLost):
				cancel(err)
				done <- err
				return
			default:
				failures, last = failures+1, err
				left := time.Until(until)
				if left <= 0 {
					lost := &RenewError{Worker: worker, Keys: keys, Failures: failures, Lost: true, Err: last}
					cancel(lost)
					done <- lost
					return
				}
				pause := min(retryPause, j.lease/10)
				wait = min(left, pause/2+rand.N(pause/2+1))
			}
			timer.Reset(wait)
		}
	}()
	return held, func() error {
		cancel(nil)
		return <-done
	}
}
