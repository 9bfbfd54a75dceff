package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/internal/output"
	"github.com/rubicon-go/rubicon/recall"
)

// cacheDir is the cache directory of runs: recall-archive in
// $XDG_CACHE_HOME when it is set, else recall's default.
func cacheDir(r *command.Run) string {
	if d := r.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "recall-archive")
	}
	return ""
}

// cacheCommand is "recall-archive cache": the size of the cache of audio
// proxies, and its clean.
func cacheCommand(o recall.Options) *command.Command {
	var all bool
	action := command.Arg{Name: "clean", Help: "clean, to clean the cache", Optional: true,
		Complete: func(context.Context, *command.Run) ([]string, error) { return []string{"clean"}, nil }}
	return &command.Command{Name: "cache", Args: []command.Arg{action}, Synopsis: "[clean [--all]] [flags]", DB: true, JSON: true,
		Summary: "the size of the cache of audio proxies; clean removes what no run uses again",
		Help: `Runs convert each recording to an audio proxy (a small mono MP3) before
sending it, and keep it in the cache directory ($XDG_CACHE_HOME or the
user's cache directory, under recall-archive). 'cache' tells its size;
'cache clean' removes the proxies that an older recipe or another ffmpeg
version made (no run uses them again), what killed runs left half
written, and lock files no writer holds. With --all it removes every
proxy: a recording sent again (another provider or model, a chunk still
to transcribe) is then converted again by ffmpeg, which costs time and no
money; the transcripts are in the database. Answers waiting in the outbox
to be recorded are paid for, and never removed.`,
		Flags: func(f *pflag.FlagSet) {
			f.BoolVar(&all, "all", false, "with clean: remove every audio proxy, not only the stale ones")
		},
		Check: func(r *command.Run) error {
			if len(r.Args) > 0 && r.Args[0] != "clean" {
				return command.Usagef("unknown action %q: say clean, or nothing to see the cache's size", r.Args[0])
			}
			if all && len(r.Args) == 0 {
				return command.Usagef("--all goes with clean")
			}
			return nil
		},
		Run: archived(o, func(ctx context.Context, r *command.Run, a *recall.Archive) error {
			mode := recall.CacheKeep
			switch {
			case len(r.Args) > 0 && all:
				mode = recall.CacheAll
			case len(r.Args) > 0:
				mode = recall.CacheStale
			}
			rep, err := a.Cache(ctx, cacheDir(r), mode)
			return r.Done(rep, err, func(w io.Writer) { printCache(w, rep) })
		})}
}

func printCache(w io.Writer, rep recall.CacheReport) {
	if c := rep.Cleaned; c != nil {
		fmt.Fprintf(w, "removed %s, %s, %s: %s freed\n", output.Plural(c.Proxies, "audio proxy", "audio proxies"),
			output.Plural(c.Locks, "stale lock file"), output.Plural(c.Partials, "partial file"), output.Bytes(c.Bytes))
		switch {
		case c.RebuildSeconds > 0 || c.Unknown > 0:
			fmt.Fprintf(w, "to rebuild: ffmpeg converts %s of this archive's audio again when a recording is sent again; no money",
				(time.Duration(c.RebuildSeconds * float64(time.Second))).Round(time.Second))
			if c.Unknown > 0 {
				fmt.Fprintf(w, " (and %s of recordings of other archives)", output.Plural(c.Unknown, "proxy", "proxies"))
			}
			fmt.Fprintln(w)
		case c.Proxies > 0:
			fmt.Fprintln(w, "to rebuild: nothing: no run uses those proxies again")
		}
	}
	fmt.Fprintf(w, "cache %s: %s in all; %s (%s), %d of them stale (%s); %s; %s waiting to be recorded (never cleaned)\n",
		rep.Dir, output.Bytes(rep.Bytes), output.Plural(rep.Proxies, "audio proxy", "audio proxies"), output.Bytes(rep.ProxyBytes),
		rep.StaleProxies, output.Bytes(rep.StaleProxyBytes),
		output.Plural(rep.Locks, "lock file"), output.Plural(rep.Outbox, "answer"))
}
