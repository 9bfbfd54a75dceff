package recall

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// hashBufSize is the read size for hashing: large enough that the system
// calls cost nothing next to the hashing, small enough to stay in cache.
const hashBufSize = 1 << 20

var hashBufs = sync.Pool{New: func() any { b := make([]byte, hashBufSize); return &b }}

// HashFile returns the hex SHA-256 of the file at path and its size,
// streaming it: memory use does not grow with the file.
func HashFile(path string) (sum string, size int64, err error) {
	return hashCounting(path, nil)
}

// hashCounting is HashFile, adding to read, when it is not nil, the bytes
// read as it goes.
func hashCounting(path string, read *atomic.Int64) (sum string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	buf := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(buf)
	h := sha256.New()
	// CopyBuffer with a plain writer uses buf; the file's WriteTo would not.
	var r io.Reader = readerOnly{f}
	if read != nil {
		r = countingReader{f, read}
	}
	size, err = io.CopyBuffer(h, r, *buf)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}

// countingReader adds what it reads to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// readerOnly hides the file's WriteTo, so that io.CopyBuffer reads into the
// large buffer.
type readerOnly struct{ io.Reader }
