//go:build !linux

package sqlstore

// Elsewhere SQLite's own synchronous=FULL syncs the write-ahead log.

// walSyncer is not used here.
type walSyncer struct{}

// syncsWAL reports whether sqlstore syncs the log itself here.
const syncsWAL = false

func newWALSyncer(string) *walSyncer { return nil }

func (*walSyncer) sync() error { return nil }

func (*walSyncer) close() {}
