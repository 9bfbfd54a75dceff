package recall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rubicon-go/rubicon/recall/media"
)

// DefaultCacheDir is where runs keep audio proxies and the outbox when
// [RunOptions.CacheDir] is not set: recall-archive in the user's cache
// directory.
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("recall: no cache directory for audio proxies: %w", err)
	}
	return filepath.Join(dir, "recall-archive"), nil
}

// CacheReport is what the cache directory holds and, after a clean, what
// went.
type CacheReport struct {
	Dir   string `json:"dir"`
	Bytes int64  `json:"bytes"`
	// Proxies are the audio proxies (mono MP3s that recordings are sent
	// as), Stale those made by another recipe or ffmpeg version, which no
	// run uses again.
	Proxies         int   `json:"proxies"`
	ProxyBytes      int64 `json:"proxy_bytes"`
	StaleProxies    int   `json:"stale_proxies"`
	StaleProxyBytes int64 `json:"stale_proxy_bytes"`
	Locks           int   `json:"locks"`
	// Outbox counts the answers, paid for, that a run could not record in
	// its database yet: the next run records them. A clean never removes
	// them.
	Outbox int `json:"outbox_entries"`
	// Version is the ffmpeg version whose proxies count as current; empty
	// when ffmpeg could not be asked, and then only proxies of another
	// recipe count as stale.
	Version string        `json:"ffmpeg_version,omitempty"`
	Cleaned *CacheCleaned `json:"cleaned,omitempty"`
}

// CacheCleaned is what a clean removed, and what rebuilding it costs.
type CacheCleaned struct {
	Proxies  int   `json:"proxies"`
	Locks    int   `json:"locks"`
	Partials int   `json:"partials"`
	Bytes    int64 `json:"bytes"`
	// RebuildSeconds is the audio, in seconds, of the recordings whose current
	// proxies were removed: ffmpeg converts it again, without payment, if
	// a recording is sent again (another provider or model, or a chunk
	// still to transcribe); transcripts are in the database. Unknown
	// counts removed proxies of recordings that this archive does not hold.
	RebuildSeconds float64 `json:"rebuild_audio_seconds"`
	Unknown        int     `json:"rebuild_unknown_proxies"`
}

// CleanMode says what [Archive.Cache] removes.
type CleanMode int

// What a cache clean removes.
const (
	// CacheKeep removes nothing: the report alone.
	CacheKeep CleanMode = iota
	// CacheStale removes the stale proxies, the partial files of writers
	// that are gone and the lock files that no writer holds.
	CacheStale
	// CacheAll removes every proxy too.
	CacheAll
)

// proxyName splits a proxy's file name: content, recipe, hash of the
// ffmpeg version.
func proxyName(name string) (sha, recipe, version string, ok bool) {
	rest, ok := strings.CutSuffix(name, ".mp3")
	if !ok || len(rest) < 66 || rest[64] != '.' {
		return "", "", "", false
	}
	sha, rest = rest[:64], rest[65:]
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", "", "", false
	}
	return sha, rest[:i], rest[i+1:], true
}

// Cache reports on the cache directory dir (the default one when empty)
// and cleans it as clean says. The outbox is never touched.
func (a *Archive) Cache(ctx context.Context, dir string, clean CleanMode) (CacheReport, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultCacheDir(); err != nil {
			return CacheReport{}, err
		}
	}
	rep := CacheReport{Dir: dir}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	current := ""
	if v, err := a.tools.Version(ctx); err == nil {
		rep.Version, current = v, shortHash(v)
	}
	if clean != CacheKeep {
		rep.Cleaned = &CacheCleaned{}
		n, err := media.CleanPartials(dir)
		if err != nil {
			return rep, err
		}
		rep.Cleaned.Partials = n
		if rep.Cleaned.Locks, rep.Cleaned.Bytes, err = media.CleanLocks(dir); err != nil {
			return rep, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return rep, err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.IsDir() {
			continue
		}
		name := e.Name()
		if strings.HasSuffix(name, ".lock") {
			rep.Locks++
			rep.Bytes += info.Size()
			continue
		}
		sha, recipe, version, ok := proxyName(name)
		if !ok {
			rep.Bytes += info.Size()
			continue
		}
		stale := recipe != media.ProxyRecipe || current != "" && version != current
		if clean == CacheAll || clean == CacheStale && stale {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return rep, err
			}
			rep.Cleaned.Proxies++
			rep.Cleaned.Bytes += info.Size()
			if !stale {
				if c, known, err := a.store.Content(ctx, sha); err != nil {
					return rep, err
				} else if known {
					rep.Cleaned.RebuildSeconds += seconds(c.Duration)
				} else {
					rep.Cleaned.Unknown++
				}
			}
			continue
		}
		rep.Proxies++
		rep.ProxyBytes += info.Size()
		rep.Bytes += info.Size()
		if stale {
			rep.StaleProxies++
			rep.StaleProxyBytes += info.Size()
		}
	}
	err = filepath.WalkDir(filepath.Join(dir, "outbox"), func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			rep.Outbox++
			rep.Bytes += info.Size()
		}
		return nil
	})
	return rep, err
}
