package recall_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/recall"
)

// BenchmarkHash compares recall's streamed SHA-256 with openssl dgst
// -sha256 on the same 1 GiB file, in one run, and hashes 64 files of
// 16 MiB with one and two workers. The files are read once before timing,
// so all cases hash from the page cache.
func BenchmarkHash(b *testing.B) {
	const size = 1 << 30
	dir := b.TempDir()
	big := filepath.Join(dir, "big")
	writeRandom(b, big, size)
	var many []string
	for i := range 64 {
		p := filepath.Join(dir, fmt.Sprintf("part-%02d", i))
		writeRandom(b, p, size/64)
		many = append(many, p)
	}
	recall.HashFile(big) // into the page cache

	b.Run("openssl/1GiB", func(b *testing.B) {
		if _, err := exec.LookPath("openssl"); err != nil {
			b.Skip("openssl is not installed")
		}
		b.SetBytes(size)
		for b.Loop() {
			if out, err := exec.Command("openssl", "dgst", "-sha256", big).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("recall/1GiB", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, _, err := recall.HashFile(big); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("recall/64x16MiB/workers-%d", workers), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				hashAll(b, many, workers)
			}
		})
	}
}

func hashAll(b *testing.B, paths []string, workers int) {
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for p := range next {
				if _, _, err := recall.HashFile(p); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
}

func writeRandom(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	for written := 0; written < n; written += len(buf) {
		buf[0]++ // no two blocks alike
		if _, err := f.Write(buf[:min(len(buf), n-written)]); err != nil {
			b.Fatal(err)
		}
	}
}
