//go:build !unix

package media

import "sync"

// held are the lock files held by this process. Elsewhere than on Unix,
// the lock keeps out this process's other writers only, and CleanPartials
// removes what other processes are writing: concurrent runs on one
// machine need Unix.
var held sync.Map

// tryLock takes the lock of the file path without waiting: ok is false
// when another writer of this process holds it.
func tryLock(path string) (unlock func(), ok bool, err error) {
	if _, taken := held.LoadOrStore(path, true); taken {
		return nil, false, nil
	}
	return func() { held.Delete(path) }, true, nil
}

// processState cannot tell here.
func processState(int) string { return "" }

// freeSpace cannot tell here.
func freeSpace(string) (uint64, bool) { return 0, false }
