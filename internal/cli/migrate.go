package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func newMigrateCmd(e *env) *cobra.Command {
	var asJSON bool
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
grit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.migrate(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"store": DSN, "up_to_date": true}`)
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
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(struct {
			Store    string `json:"store"`
			UpToDate bool   `json:"up_to_date"`
		}{shownDSN(e.storeDSN), true})
	}
	fmt.Fprintf(e.stdout, "%s: schema up to date\n", shownDSN(e.storeDSN))
	return nil
}
