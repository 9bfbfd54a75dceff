package recall

// WithPause returns opts with pause called at the named points of each
// chunk's request, in the worker that sends it: "claimed", "sent" (after
// its sending commit), "connected" (its connection ready, no byte
// written) and "answered" (before its outcome is recorded). A pause that
// blocks freezes that worker; stop ends its renewals, as a freeze of the
// process would.
func WithPause(opts RunOptions, pause func(point, key string, stop func())) RunOptions {
	opts.pause = pause
	return opts
}
