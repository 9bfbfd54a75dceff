package store

import (
	"errors"
	"net"
	"strings"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rubicon-go/rubicon/sqlstore"
)

// Explain says in words what a failure of the database was, for a run's
// report: "" when err says nothing more than its own text.
func Explain(err error) string {
	if err == nil {
		return ""
	}
	var se sqlStater
	if errors.As(err, &se) {
		code := se.SQLState()
		switch {
		case code == "40001":
			return "a serialization failure: another run changed the same records at the same moment"
		case code == "40P01":
			return "a deadlock with another run"
		case code == "55P03":
			return "a row was locked by another run for too long"
		case code == "57P01" || code == "57P02" || code == "57P03":
			return "the PostgreSQL server was shut down or restarted, or ended the connection"
		case code == "53100":
			return "the database server's disk is full"
		case strings.HasPrefix(code, "08"):
			return "the connection to the database server was lost"
		}
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return "the disk that holds the database is full"
		case sqlite3.SQLITE_IOERR:
			return "the database file could not be read or written"
		case sqlite3.SQLITE_READONLY:
			return "the database file cannot be written"
		}
	}
	switch {
	case errors.Is(err, sqlstore.ErrLogReplaced):
		return "the database's write-ahead log was deleted or replaced"
	case errors.Is(err, sqlstore.ErrLocked):
		return "the database stayed locked by another process"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the database server could not be reached: it may be restarting"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "the connection to the database server was lost"
	}
	if msg := err.Error(); strings.Contains(msg, "bad connection") || strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") {
		return "the connection to the database server was lost"
	}
	return ""
}
