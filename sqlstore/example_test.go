package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/ledger"
	"github.com/rubicon-go/rubicon/sqlstore"
)

// The budget hold and the sending transition commit in one transaction: a
// crash leaves either both or neither.
func ExampleDB_Update() {
	dir, _ := os.MkdirTemp("", "sqlstore-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(dir, "rubicon.db"), sqlstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	l := ledger.New(db.LedgerStore(), nil)

	l.Open(ctx, "budget", "micro-USD", 5_000_000)
	j.Insert(ctx, journal.NewOperation{Key: "transcribe-chunk-1", Kind: "transcribe"})
	j.Claim(ctx, "transcribe", "w1", 1)

	err = db.Update(ctx, func(tx *sqlstore.Tx) error {
		if _, err := l.HoldTx(ctx, tx, ledger.HoldRequest{ID: "transcribe-chunk-1", Account: "budget", Amount: 36_000}); err != nil {
			return err
		}
		_, err := j.SendTx(ctx, tx, "transcribe-chunk-1", "w1")
		return err
	})
	op, _ := j.Get(ctx, "transcribe-chunk-1")
	acct, _ := l.Account(ctx, "budget")
	fmt.Println(err, op.State, acct.Held)
	// Output:
	// <nil> sending 36000
}

// An application adds its own tables through the same migrations.
func ExampleMigration() {
	dir, _ := os.MkdirTemp("", "sqlstore-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(dir, "app.db"), sqlstore.Options{Migrations: []sqlstore.Migration{{
		Component: "app", Version: 1, Name: "files",
		SQLite:   "CREATE TABLE app_files (sha256 TEXT PRIMARY KEY, path TEXT NOT NULL)",
		Postgres: "CREATE TABLE app_files (sha256 TEXT PRIMARY KEY, path TEXT NOT NULL)",
	}}})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	v, _ := db.SchemaVersion(ctx, "app")
	fmt.Println("app schema version", v)
	// Output:
	// app schema version 1
}
