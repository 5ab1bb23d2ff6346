package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
)

// walPositionSQL reads where the server is in its WAL: a primary's
// current position, a standby's last replayed one (a standby cannot tell
// its current position: pg_current_wal_lsn fails in recovery), in bytes.
const walPositionSQL = `SELECT (pg_control_system()).system_identifier, pg_is_in_recovery(),
	coalesce(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END - '0/0'::pg_lsn, 0)::bigint,
	pg_last_xact_replay_timestamp(), clock_timestamp()`

// WALPosition says where the server is in its write-ahead log, for a
// replica's lag behind its primary (store.Replicated).
func (s *Store) WALPosition(ctx context.Context) (store.WALPosition, error) {
	var (
		p        store.WALPosition
		system   int64
		lsn      int64
		replayed pgtype.Timestamptz
	)
	if err := s.pool.QueryRow(ctx, walPositionSQL).Scan(&system, &p.Standby, &lsn, &replayed, &p.Now); err != nil {
		return p, fmt.Errorf("wal position: %w", err)
	}
	p.System, p.LSN, p.Replayed = strconv.FormatUint(uint64(system), 10), uint64(lsn), fromTS(replayed)
	return p, nil
}
