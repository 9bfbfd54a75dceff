package recall_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/recall"
	"github.com/rubicon-go/rubicon/recall/media"
	"github.com/rubicon-go/rubicon/recall/provider"
	"github.com/rubicon-go/rubicon/recall/sandbox"
)

// BenchmarkRun transcribes many short recordings (RECALL_BENCH_FILES, 1,000
// by default; each 1 s, distinct) through the sandbox with 4 workers, and,
// in the same run, makes the audio proxies alone and makes the provider
// calls alone for the same files (ffmpeg-only adds a probe per file, for
// scale). The archive's own cost per item (hashing aside: that is add's)
// is what the full run takes beyond proxies and calls.
func BenchmarkRun(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("RECALL_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	const workers = 4
	dir := b.TempDir()
	base := filepath.Join(b.TempDir(), "base.mp3")
	testkit.Tone(b, base, 440, 1*time.Second, "-ac", "1")
	audio, _ := os.ReadFile(base)
	paths := make([]string, n)
	for i := range paths {
		// Distinct bytes after the audio make distinct contents that decode alike.
		paths[i] = filepath.Join(dir, fmt.Sprintf("r%04d.mp3", i))
		os.WriteFile(paths[i], append(append([]byte(nil), audio...), []byte(fmt.Sprintf("%016d", i))...), 0o644)
	}
	sb := sandbox.New(sandbox.Options{})
	srv := httptest.NewServer(sb)
	defer srv.Close()
	prov, err := provider.New(provider.Options{Name: "openai", BaseURL: srv.URL, Model: "whisper-1"})
	if err != nil {
		b.Fatal(err)
	}
	tools := media.Tools{}
	ctx := context.Background()

	b.Run(fmt.Sprintf("archive/%d-files/workers-%d", n, workers), func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			a, err := recall.Open(ctx, filepath.Join(b.TempDir(), "r.db"), recall.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := a.Add(ctx, "bench", []string{dir}, recall.AddOptions{}); err != nil {
				b.Fatal(err)
			}
			cache := b.TempDir()
			b.StartTimer()
			start := time.Now()
			rep, err := a.Run(ctx, "bench", recall.RunOptions{Provider: prov, PricePerMinute: 6000, Workers: workers, CacheDir: cache})
			elapsed := time.Since(start)
			if err != nil || rep.Done != n {
				b.Fatalf("run: %+v, %v", rep, err)
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "items/s")
			a.Close()
		}
	})
	b.Run(fmt.Sprintf("ffmpeg-only/%d-files/workers-%d", n, workers), func(b *testing.B) {
		for b.Loop() {
			cache := b.TempDir()
			start := time.Now()
			parallel(b, paths, workers, func(i int, p string) error {
				proxy := filepath.Join(cache, strconv.Itoa(i)+".mp3")
				if err := tools.Proxy(ctx, p, proxy); err != nil {
					return err
				}
				_, err := tools.Probe(ctx, proxy)
				return err
			})
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "items/s")
		}
	})
	b.Run(fmt.Sprintf("proxy-only/%d-files/workers-%d", n, workers), func(b *testing.B) {
		for b.Loop() {
			cache := b.TempDir()
			start := time.Now()
			parallel(b, paths, workers, func(i int, p string) error {
				return tools.Proxy(ctx, p, filepath.Join(cache, strconv.Itoa(i)+".mp3"))
			})
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "items/s")
		}
	})
	b.Run(fmt.Sprintf("provider-only/%d-files/workers-%d", n, workers), func(b *testing.B) {
		proxy := filepath.Join(b.TempDir(), "p.mp3")
		if err := tools.Proxy(ctx, paths[0], proxy); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			start := time.Now()
			parallel(b, paths, workers, func(i int, _ string) error {
				_, err := prov.Transcribe(ctx, provider.Chunk{Key: strconv.Itoa(i), Path: proxy})
				return err
			})
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "items/s")
		}
	})
}

func parallel(b *testing.B, paths []string, workers int, fn func(int, string) error) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i, paths[i]); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
}
