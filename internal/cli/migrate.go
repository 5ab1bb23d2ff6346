package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store"
)

func newMigrateCmd(e *env) *cobra.Command {
	var (
		asJSON, sql, check bool
		driver             string
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "create or upgrade the store's schema (idempotent; safe from several processes at once)",
		Long: `Applies the store's embedded schema migrations that it lacks, creating the
store if it is not there, and does nothing when it has them all. grit run,
submit, worker and server also do, on open; the commands that read a store
or act on what is in it (tasks, task, status, wait, dlq, breakers, limits)
only open a store that is there at this grit's schema, and change no
schema. Run this first when workers start together on a new database, or
to upgrade one while no worker runs. On PostgreSQL it also re-applies the
current text of grit's SQL functions when the store's differ (their hash
is kept in schema_functions), so a store upgraded by any earlier grit runs
this one's functions. A store migrated by a newer grit is refused: upgrade
grit.

--sql prints, and applies nothing, the SQL that makes a new store at this
grit's schema, for a migration tool (goose, atlas, flyway) or psql: for the
driver of --store's scheme (a PostgreSQL DSN's schema parameter names the
schema; no server is reached) or of --driver. --check changes nothing
either: it exits 1, naming them, when the store lacks migrations of this
grit, and 0 when it has them all.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case sql && check:
				return usageErr("migrate: --sql or --check, not both")
			case sql && asJSON:
				return usageErr("migrate: --sql prints SQL, not JSON: leave out --json")
			case driver != "" && !sql:
				return usageErr("migrate: --driver goes with --sql (the other modes use --store's driver)")
			case sql:
				return e.migrateSQL(driver)
			case check:
				return e.migrateCheck(cmd.Context(), asJSON)
			}
			return e.migrate(cmd.Context(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"store": DSN, "up_to_date": BOOL, "missing": ["NNNN_name", …]}`)
	cmd.Flags().BoolVar(&sql, "sql", false, "print the SQL that makes a new store at this grit's schema, and apply nothing")
	cmd.Flags().StringVar(&driver, "driver", "", "with --sql: the driver to print for, sqlite or postgres (default: --store's)")
	cmd.Flags().BoolVar(&check, "check", false, "apply nothing; exit 1, naming them, when the store lacks migrations of this grit, 0 when it has them all")
	return cmd
}

func (e *env) migrate(ctx context.Context, asJSON bool) error {
	st, err := e.openStore(ctx) // both drivers create and migrate on open
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	return e.printMigrated(asJSON, nil)
}

// printMigrated says whether the store is up to date: it is when it lacks
// none of this grit's migrations.
func (e *env) printMigrated(asJSON bool, missing []store.Migration) error {
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = fmt.Sprintf("%04d_%s", m.Version, m.Name)
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(struct {
			Store    string   `json:"store"`
			UpToDate bool     `json:"up_to_date"`
			Missing  []string `json:"missing"`
		}{shownDSN(e.storeDSN), len(missing) == 0, names})
	}
	if len(missing) == 0 {
		fmt.Fprintf(e.stdout, "%s: schema up to date\n", shownDSN(e.storeDSN))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: %d migrations missing (grit migrate applies them):\n", shownDSN(e.storeDSN), len(missing))
	for _, n := range names {
		fmt.Fprintf(e.stdout, "  %s\n", n)
	}
	return nil
}

// migrateCheck is grit migrate --check: it opens the store as the
// commands that only read do, and exits 1 when it lacks migrations.
func (e *env) migrateCheck(ctx context.Context, asJSON bool) error {
	st, err := store.OpenExisting(ctx, e.storeDSN)
	if err == nil {
		if err := st.Close(); err != nil {
			return err
		}
		return e.printMigrated(asJSON, nil)
	}
	var se *store.SchemaError
	if !errors.As(err, &se) || len(se.Missing) == 0 || len(se.Unknown) > 0 {
		return storeErr(err)
	}
	if err := e.printMigrated(asJSON, se.Missing); err != nil {
		return err
	}
	return &exitError{code: exitFailed, err: errSilent}
}

// migrateSQL is grit migrate --sql: the SQL of a new store for driver, or
// for --store's.
func (e *env) migrateSQL(driver string) error {
	scheme, err := store.Scheme(e.storeDSN)
	if err != nil && driver == "" {
		return usageErr("migrate --sql: %v", err)
	}
	dsn := e.storeDSN
	if driver != "" && driver != scheme {
		scheme, dsn = driver, "" // the driver's defaults, not another driver's DSN
	}
	sql, err := store.Script(scheme, dsn)
	if err != nil {
		return usageErr("migrate --sql: %v", err)
	}
	_, err = io.WriteString(e.stdout, sql)
	return err
}
