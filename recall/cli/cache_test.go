package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/schematest"
	"github.com/rubicon-go/rubicon/recall/cli"
)

// TestCacheCleanRemovesWhatNoRunUses cleans a cache that a run filled:
// the proxy of another recipe and a lock file nobody beat for minutes go;
// the current proxy, a lock in use and the outbox stay, until --all takes
// the proxy too and says what converting it again costs.
func TestCacheCleanRemovesWhatNoRunUses(t *testing.T) {
	dir := t.TempDir()
	recording(t, filepath.Join(dir, "a.mp3"))
	home := t.TempDir()
	cache := filepath.Join(home, "recall-archive")
	env := map[string]string{cli.DBEnv: filepath.Join(t.TempDir(), "r.db"), "XDG_CACHE_HOME": home}
	for _, args := range [][]string{{"add", "b", dir}, {"run", "b"}} {
		if r := run(t, env, args...); r.code != cli.ExitOK {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
	}
	proxies, _ := filepath.Glob(filepath.Join(cache, "*.mp3"))
	if len(proxies) != 1 {
		t.Fatalf("the run left %q in its cache", proxies)
	}
	write := func(name string, age time.Duration) string {
		p := filepath.Join(cache, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
		return p
	}
	stale := write(strings.Repeat("ab", 32)+".wav-stereo-v0.0123456789ab.mp3", 0)
	oldLock := write(strings.Repeat("cd", 32)+".mp3-mono-16khz-32kbps-v1.0123456789ab.mp3.lock", 5*time.Minute)
	kept := write("outbox/archive/entry.json", time.Hour)

	var rep struct {
		Proxies      int `json:"proxies"`
		StaleProxies int `json:"stale_proxies"`
		Locks        int `json:"locks"`
		Outbox       int `json:"outbox_entries"`
		Cleaned      *struct {
			Proxies int     `json:"proxies"`
			Locks   int     `json:"locks"`
			Rebuild float64 `json:"rebuild_audio_seconds"`
		} `json:"cleaned"`
	}
	show := func(args ...string) {
		t.Helper()
		r := run(t, env, append(args, "--json")...)
		schematest.Check(t, "recall-archive/cache.json", []byte(r.stdout))
		rep.Cleaned = nil
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != cli.ExitOK || err != nil {
			t.Fatalf("%q: %d %v %s", args, r.code, err, r.stderr)
		}
	}
	show("cache")
	if rep.Proxies != 2 || rep.StaleProxies != 1 || rep.Locks != 2 || rep.Outbox != 1 || rep.Cleaned != nil {
		t.Fatalf("cache: %+v", rep)
	}
	show("cache", "clean")
	if rep.Cleaned == nil || rep.Cleaned.Proxies != 1 || rep.Cleaned.Locks != 1 || rep.Cleaned.Rebuild != 0 || rep.Proxies != 1 || rep.Locks != 1 {
		t.Fatalf("cache clean: %+v %+v", rep, rep.Cleaned)
	}
	for _, p := range []string{stale, oldLock} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("cache clean left %s", p)
		}
	}
	for _, p := range []string{proxies[0], proxies[0] + ".lock", kept} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("cache clean removed %s: %v", p, err)
		}
	}
	text := run(t, env, "cache", "clean", "--all").stdout
	if !strings.Contains(text, "removed 1 audio proxy") || !strings.Contains(text, "ffmpeg converts 1s of this archive's audio again") {
		t.Errorf("cache clean --all:\n%s", text)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("cache clean --all removed the outbox: %v", err)
	}
	if r := run(t, env, "cache", "--all"); r.code != cli.ExitUsage {
		t.Errorf("cache --all: %d %q", r.code, r.stderr)
	}
}
