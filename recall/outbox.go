package recall

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/recall/store"
)

// outbox keeps, on the worker's disk, how each request that was sent
// ended (its transcript, when it was applied) from the moment the answer
// arrives until the database has recorded it: an answer that was paid for
// is never lost to a database that could not be reached. What the run
// cannot record stays there, and the next run records it first.
//
// Each entry is a file of its own, written whole (a temporary file,
// synced, renamed, and the directory synced) before the record is tried,
// and removed once it is recorded.
type outbox struct{ dir string }

// kept is an outbox entry: what the database is to record for a chunk.
type kept struct {
	Batch      string            `json:"batch"`
	Chunk      store.Chunk       `json:"chunk"`
	Report     journal.Report    `json:"report"`
	Transcript *store.Transcript `json:"transcript,omitempty"`
	At         time.Time         `json:"at"`
}

// openOutbox returns the outbox in dir, making the directory.
func openOutbox(dir string) (*outbox, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the outbox for answers not yet recorded, %s: %w", dir, err)
	}
	return &outbox{dir: dir}, nil
}

// path returns the file of the entry for the request key.
func (o *outbox) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(o.dir, hex.EncodeToString(sum[:12])+".json")
}

// put keeps k durably, and returns its file.
func (o *outbox) put(k kept) (string, error) {
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	dst := o.path(k.Chunk.Key)
	tmp, err := os.CreateTemp(o.dir, ".kept-*")
	if err != nil {
		return "", fmt.Errorf("keeping the answer to %s in %s: %w", k.Chunk.Key, o.dir, err)
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err == nil {
		err = syncDir(o.dir)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("keeping the answer to %s in %s: %w", k.Chunk.Key, o.dir, err)
	}
	return dst, nil
}

// done removes the entry for the request key, once it is recorded.
func (o *outbox) done(key string) error {
	err := os.Remove(o.path(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// aside moves the entry for the request key out of the way of later runs,
// into the outbox's "unrecorded" directory, and returns where: for an
// outcome the journal refuses to record (the request was settled
// otherwise meanwhile), kept for a person to look at.
func (o *outbox) aside(key string) (string, error) {
	dir := filepath.Join(o.dir, "unrecorded")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(o.path(key)))
	if err := os.Rename(o.path(key), dst); err != nil {
		return "", err
	}
	return dst, syncDir(dir)
}

// list returns every entry, and the files that cannot be read.
func (o *outbox) list() ([]kept, map[string]error) {
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return nil, map[string]error{o.dir: err}
	}
	var out []kept
	bad := map[string]error{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(o.dir, e.Name())
		b, err := os.ReadFile(path)
		var k kept
		if err == nil {
			err = json.Unmarshal(b, &k)
		}
		if err == nil && k.Chunk.Key == "" {
			err = errors.New("it names no request")
		}
		if err != nil {
			bad[path] = err
			continue
		}
		out = append(out, k)
	}
	return out, bad
}

// syncDir makes the names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
