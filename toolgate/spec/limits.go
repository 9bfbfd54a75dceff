package spec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Limits on a document, which is untrusted input. Both are far above what
// real API descriptions need: GitHub's, among the largest, is 13 MB and
// nests 21 levels deep.
const (
	// MaxDocumentBytes is the size of the largest document toolgate reads,
	// and of the largest JSON a YAML document's aliases may expand to.
	MaxDocumentBytes = 64 << 20
	// MaxNesting is how many levels deep a document may nest objects and
	// arrays. Decoding recurses once per level; a Go stack overflow cannot
	// be recovered from, so deeper input is refused before it is decoded.
	MaxNesting = 1000
)

// readLimited reads the file at path, up to MaxDocumentBytes: a larger
// file is refused without being read, and so is anything that is not a
// regular file once it passes the limit. Reading stops when ctx is done.
func readLimited(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > MaxDocumentBytes {
		return nil, tooBig(info.Size())
	}
	// A pipe or a device can be read from forever; a deadline in the past
	// ends a read that waits on one.
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	// Read one byte more than the limit, into a buffer of the size the
	// file says it has: what grows while it is read is still caught. A
	// pipe or a device says nothing; its buffer takes memory only as it
	// fills.
	size := info.Size() + 512
	if !info.Mode().IsRegular() {
		size = MaxDocumentBytes + 1
	}
	data := make([]byte, 0, size)
	for len(data) <= MaxDocumentBytes && err == nil {
		if len(data) == cap(data) {
			// Doubling, but never past the limit: what cannot be read
			// whole is not held whole either.
			grown := make([]byte, len(data), min(2*cap(data), MaxDocumentBytes+1))
			copy(grown, data)
			data = grown
		}
		var n int
		n, err = f.Read(data[len(data):min(cap(data), MaxDocumentBytes+1)])
		data = data[:len(data)+n]
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocumentBytes {
		return nil, tooBig(-1)
	}
	return data, nil
}

func tooBig(size int64) error {
	if size < 0 {
		return fmt.Errorf("the document is larger than the %d MiB toolgate reads", MaxDocumentBytes>>20)
	}
	return fmt.Errorf("the document is %d bytes, more than the %d MiB toolgate reads", size, MaxDocumentBytes>>20)
}

// checkNesting scans JSON for objects and arrays nested deeper than
// MaxNesting, skipping strings, in one pass that does not recurse.
func checkNesting(data []byte) error {
	depth, deepest, at := 0, 0, -1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			// Indentation, eight spaces at a time: most of a pretty-printed
			// document's bytes.
			for i+9 <= len(data) && binary.LittleEndian.Uint64(data[i+1:]) == 0x2020202020202020 {
				i += 8
			}
		case '"':
			i = stringEnd(data, i+1)
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if depth > MaxNesting && at < 0 {
					at = i
				}
			}
		case '}', ']':
			depth--
		}
	}
	if at < 0 {
		return nil
	}
	line, col := position(data, int64(at))
	return nestingError(deepest, line, col+1)
}

// stringEnd returns the index of the quote that closes the JSON string
// starting at i, or len(data).
func stringEnd(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return len(data)
		}
		q += i
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for j := q - 1; j >= i && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

func nestingError(depth, line, col int) error {
	return fmt.Errorf("the document nests %d levels deep at line %d, column %d; toolgate reads at most %d", depth, line, col, MaxNesting)
}

var errEmpty = errors.New("the document is empty")
