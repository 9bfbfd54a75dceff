// Package recall is recall-archive: batch transcription of a folder of
// recordings through a paid speech-to-text API that never pays twice.
//
// Files are recognised by probing them with ffprobe and identified by the
// SHA-256 of their content: the same recording at two paths, or in two
// batches, is one content, transcribed at most once. Everything before the
// paid request (discovery, probing, hashing, the audio proxy, the budget
// hold) is safe to repeat; the paid request itself goes through rubicon's
// journal, ledger and boundary-aware client.
//
// Each behaviour has its file: add.go, estimate.go, run.go, status.go,
// retryfailed.go, ambiguous.go, resolve.go, reconcile.go, search.go and
// export.go. What they keep is kept by package recall/store, and the paid
// requests are sent by package recall/provider.
package recall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/store"
	"github.com/rubicon-go/rubicon/recall/subtitle"
)

// Archive is an open recall-archive database.
type Archive struct {
	store     *store.Store
	tools     media.Tools
	now       func() time.Time
	subtitles subtitle.Rules
}

// Options configure [Open].
type Options struct {
	// Tools locates ffprobe and ffmpeg.
	Tools media.Tools
	// Lease is how long a killed run's claims on requests it had not sent
	// last before another run takes them; default 30 s, or SendLease if
	// shorter. Running workers renew theirs.
	Lease time.Duration
	// SendLease is how long a request that was sent stays with its run:
	// it must be over by then (the provider's timeout must fit in it), and
	// only then does the next run declare it ambiguous, or may it be
	// resolved as not applied. Default: the provider's default timeout
	// and 30 s.
	SendLease time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Clock, if set, replaces the database's clock, which judges leases:
	// for tests that move time. Every process that shares the archive
	// must then use the same.
	Clock func() time.Time
	// ReadOnly opens the archive for reading only: what only reads it
	// works, and what changes it fails, saying so.
	ReadOnly bool
	// Subtitles are the rules of the cues that srt and vtt transcripts
	// are cut into; the zero value is subtitle.Default.
	Subtitles subtitle.Rules
}

// Open opens the archive database that dsn names (a file path for SQLite,
// or a postgres:// DSN), creating or upgrading its schema.
func Open(ctx context.Context, dsn string, opts Options) (*Archive, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SendLease <= 0 {
		opts.SendLease = provider.DefaultTimeout + LeaseMargin
	}
	if opts.Lease <= 0 {
		opts.Lease = min(30*time.Second, opts.SendLease)
	}
	s, err := store.Open(ctx, dsn, store.Options{Lease: opts.Lease, SendLease: opts.SendLease, Now: opts.Now, Clock: opts.Clock, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, err
	}
	if opts.Subtitles == (subtitle.Rules{}) {
		opts.Subtitles = subtitle.Default
	}
	if err := opts.Subtitles.Check(); err != nil {
		s.Close()
		return nil, err
	}
	return &Archive{store: s, tools: opts.Tools, now: opts.Now, subtitles: opts.Subtitles}, nil
}

// LeaseMargin is what a request's lease gives by default beyond the
// provider's timeout: time to record the answer.
const LeaseMargin = 30 * time.Second

// Close closes the archive.
func (a *Archive) Close() error { return a.store.Close() }

// Problem is a path that could not be used, and why.
type Problem struct {
	Path  string `json:"path"`
	State string `json:"state"`
	Phase string `json:"phase,omitempty"`
	Error string `json:"error"`
}

// checkBatchName refuses names that would be awkward on a command line or
// in a file name.
func checkBatchName(name string) error {
	if name == "" || len(name) > 100 || strings.ContainsAny(name, "/\\\x00\n\r\t") || strings.TrimSpace(name) != name {
		return fmt.Errorf("batch name %q: use 1 to 100 characters, without slashes, control characters or surrounding spaces", name)
	}
	return nil
}
