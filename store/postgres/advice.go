package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// adviceSQL reads whether autovacuum runs on the server and on the tasks
// table, and whether JIT compilation is on.
const adviceSQL = `SELECT current_setting('autovacuum') = 'on', current_setting('jit') = 'on',
	current_setting('transaction_read_only') = 'on' OR pg_is_in_recovery(),
	coalesce((SELECT option_value FROM pg_options_to_table(c.reloptions)
		WHERE option_name = 'autovacuum_enabled'), 'true') IN ('true', 'on', 'yes', '1')
FROM pg_class c WHERE c.oid = '$S.tasks'::regclass`

// Advice says when the database is read-only, and when autovacuum does not
// clean the tasks table: every claim
// and every result leaves a dead row version and index entries behind,
// and without VACUUM they pile up, in the table and in the claim index
// that every claim walks. Behind a pooler, where the store cannot turn
// JIT off for its own connections (route.go), it says so when the
// server's default has it on.
func (s *Store) Advice(ctx context.Context) ([]string, error) {
	var server, jit, readOnly, table bool
	if err := s.pool.QueryRow(ctx, s.sql(adviceSQL)).Scan(&server, &jit, &readOnly, &table); err != nil {
		return nil, fmt.Errorf("advice: %w", err)
	}
	const cost = "the dead rows and index entries every claim and result leaves behind pile up, and claims slow down as they do"
	var out []string
	if readOnly {
		out = append(out, "the database is read-only (a standby, or default_transaction_read_only is on): workers cannot claim tasks or record results until it is writable")
	}
	if !server {
		out = append(out, fmt.Sprintf("autovacuum is off on this PostgreSQL server: %s; turn it on (autovacuum = on), or run VACUUM %s.tasks often", cost, s.schema))
	}
	if jit && s.route.pooled {
		cc := s.pool.Config().ConnConfig
		out = append(out, fmt.Sprintf("JIT compilation is on, and through a connection pooler the store cannot turn it off for its own connections: "+
			"short statements over a backlog the statistics do not cover yet can spend 50-100 ms compiling; "+
			"turn it off for grit's role (ALTER ROLE %s SET jit = off) or its database (ALTER DATABASE %s SET jit = off), then let the pooler open new server connections",
			pgx.Identifier{cc.User}.Sanitize(), pgx.Identifier{cc.Database}.Sanitize()))
	}
	if !table {
		out = append(out, fmt.Sprintf("autovacuum is off for %s.tasks (autovacuum_enabled = false): %s; ALTER TABLE %s.tasks RESET (autovacuum_enabled), or run VACUUM %s.tasks often", s.schema, cost, s.schema, s.schema))
	}
	return out, nil
}
