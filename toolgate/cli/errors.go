package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// readProblem says why a file could not be read, without the system
// call's name.
func readProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.EISDIR):
		return "it is a directory, not a file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadError explains why the document could not be loaded; configuration
// errors explain themselves.
func loadError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot read the document %s: %s", pe.Path, readProblem(pe.Err))
	}
	return err
}

// dbError explains why the journal at dsn could not be opened, naming it
// without its password.
func dbError(dsn string, err error) error {
	name := sqlstore.RedactDSN(dsn)
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return err // SQLite's errors name the file and say what to do
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot open the journal %s: nothing accepts connections there; is PostgreSQL running, on that host and port? (--db or $%s)", name, DBEnv)
	case errors.Is(err, sqlstore.ErrNotPostgresURL):
		return fmt.Errorf("the journal's address %s is not a PostgreSQL URL; give postgres://USER@HOST:PORT/DATABASE (--db or $%s)", name, DBEnv)
	}
	return fmt.Errorf("cannot open the journal %s: %w", name, err)
}

// resolveError explains why a call could not be resolved.
func resolveError(key string, err error) error {
	if errors.Is(err, journal.ErrNotFound) {
		return fmt.Errorf("no call with key %q in the journal; toolgate calls lists the calls whose outcome is unknown, with their keys", key)
	}
	return err
}
