package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"sort"
	"time"
)

// Migration is one versioned change to the schema of a component: rubicon
// itself, or an application such as recall-archive. Versions of a component
// start at 1 and follow each other without gaps. Each migration runs once,
// in its own transaction, recorded in the rubicon_schema table.
type Migration struct {
	// Component names the owner of the tables, such as "recall".
	Component string
	Version   int
	// Name says what the migration does.
	Name string
	// SQLite and Postgres are the statements for each backend.
	SQLite, Postgres string
}

// coreComponent is rubicon's own component name.
const coreComponent = "rubicon"

//go:embed schema/*.sql
var schemaFiles embed.FS

func coreMigrations() []Migration {
	read := func(name string) string {
		b, err := schemaFiles.ReadFile("schema/" + name)
		if err != nil {
			panic(err) // embedded at build time
		}
		return string(b)
	}
	return []Migration{{
		Component: coreComponent, Version: 1, Name: "journal and ledger",
		SQLite: read("core_sqlite_1.sql"), Postgres: read("core_postgres_1.sql"),
	}, {
		Component: coreComponent, Version: 2, Name: "fewer pages written per transition",
		SQLite: read("core_sqlite_2.sql"), Postgres: read("core_postgres_2.sql"),
	}, {
		Component: coreComponent, Version: 3, Name: "holds found by their operation",
		SQLite: read("core_sqlite_3.sql"), Postgres: read("core_postgres_3.sql"),
	}, {
		Component: coreComponent, Version: 4, Name: "leases name their journal; one clock per host",
		SQLite: read("core_sqlite_4.sql"), Postgres: read("core_postgres_4.sql"),
	}, {
		Component: coreComponent, Version: 5, Name: "guards of open operations; replay keys of applied ones",
		SQLite: read("core_5.sql"), Postgres: read("core_5.sql"),
	}}
}

const createSchemaTable = `CREATE TABLE IF NOT EXISTS rubicon_schema (
	component  TEXT NOT NULL,
	version    INTEGER NOT NULL,
	name       TEXT NOT NULL,
	applied_at BIGINT NOT NULL,
	PRIMARY KEY (component, version)
)`

// checkMigrated makes sure a database opened read-only has every
// migration the program knows, and none it does not.
func (db *DB) checkMigrated(ctx context.Context, app []Migration) error {
	want := map[string]int{coreComponent: len(coreMigrations())}
	order := []string{coreComponent}
	for _, m := range app {
		if _, seen := want[m.Component]; !seen {
			order = append(order, m.Component)
		}
		want[m.Component]++
	}
	for _, c := range order {
		v, err := db.SchemaVersion(ctx, c)
		if err != nil {
			return fmt.Errorf("%s opened read-only holds no schema this program knows: %w", db.name, err)
		}
		switch {
		case v < want[c]:
			return fmt.Errorf("%s opened read-only: its %s schema is at version %d, and this program needs %d; open it once with write access to upgrade it", db.name, c, v, want[c])
		case v > want[c]:
			return fmt.Errorf("%s was made by a newer version: its %s schema is at version %d, and this program knows versions up to %d; use a newer program", db.name, c, v, want[c])
		}
	}
	return nil
}

// migrate applies every migration the database lacks, rubicon's first.
func (db *DB) migrate(ctx context.Context, app []Migration) error {
	byComponent := map[string][]Migration{}
	order := []string{coreComponent}
	for _, m := range append(coreMigrations(), app...) {
		if m.Component == "" {
			return fmt.Errorf("migration %d (%s) names no component", m.Version, m.Name)
		}
		if _, seen := byComponent[m.Component]; !seen && m.Component != coreComponent {
			order = append(order, m.Component)
		}
		byComponent[m.Component] = append(byComponent[m.Component], m)
	}
	for _, c := range order {
		ms := byComponent[c]
		sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
		for i, m := range ms {
			if m.Version != i+1 {
				return fmt.Errorf("migrations of %s: expected version %d, found %d (%s): versions start at 1 without gaps", c, i+1, m.Version, m.Name)
			}
		}
		if err := db.migrateComponent(ctx, c, ms); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) migrateComponent(ctx context.Context, component string, ms []Migration) error {
	for {
		done, err := db.migrateOne(ctx, component, ms)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next missing migration of component, if any, in a
// transaction that other processes opening the database wait for.
func (db *DB) migrateOne(ctx context.Context, component string, ms []Migration) (done bool, err error) {
	err = db.Update(ctx, func(tx *Tx) error {
		if db.d.lockMigrations != "" {
			if _, err := tx.q.ExecContext(ctx, db.d.lockMigrations); err != nil {
				return err
			}
		}
		if _, err := tx.q.ExecContext(ctx, createSchemaTable); err != nil {
			return err
		}
		var current int
		if err := tx.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM rubicon_schema WHERE component = $1`, component).Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("%s was made by a newer version: its %s schema is at version %d, and this program knows versions up to %d; use a newer program, or another database",
				db.name, component, current, len(ms))
		}
		if current == len(ms) {
			done = true
			return nil
		}
		m := ms[current]
		stmt := m.SQLite
		if db.d == postgres {
			stmt = m.Postgres
		}
		if _, err := tx.q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration %s %d (%s): %w", component, m.Version, m.Name, err)
		}
		_, err := tx.q.ExecContext(ctx, `INSERT INTO rubicon_schema (component, version, name, applied_at) VALUES ($1, $2, $3, $4)`,
			component, m.Version, m.Name, time.Now().UnixMicro())
		return err
	})
	return done, err
}

// SchemaVersion returns the schema version of component in the database (0
// if none).
func (db *DB) SchemaVersion(ctx context.Context, component string) (int, error) {
	var v int
	err := db.View(ctx, func(tx *Tx) error {
		return tx.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM rubicon_schema WHERE component = $1`, component).Scan(&v)
	})
	return v, err
}
