package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
)

const auditCols = `id, at, who, action, target, count, detail`

// Audit appends e to the log; its ID and, when zero, its At are the
// store's.
func (s *Store) Audit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	if err := store.ValidateAudit(e); err != nil {
		return store.AuditEntry{}, err
	}
	at := pgtype.Timestamptz{Time: e.At, Valid: !e.At.IsZero()}
	row := s.pool.QueryRow(ctx, s.sql(`INSERT INTO $S.audit (at, who, action, target, count, detail)
		VALUES (coalesce($1, now()), $2, $3, $4, $5, $6) RETURNING `+auditCols),
		at, e.Who, e.Action, e.Target, e.Count, e.Detail)
	got, err := scanAudit(row)
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("audit %q by %q: %w", e.Action, e.Who, err)
	}
	return got, nil
}

// AuditLog lists entries newest first, walking the primary key backward
// from beforeID.
func (s *Store) AuditLog(ctx context.Context, beforeID int64, limit int) ([]store.AuditEntry, error) {
	q := `SELECT ` + auditCols + ` FROM $S.audit WHERE ($1 = 0 OR id < $1) ORDER BY id DESC`
	args := []any{beforeID}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.pool.Query(ctx, s.sql(q), args...)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.AuditEntry, error) { return scanAudit(r) })
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return es, nil
}

func scanAudit(r pgx.Row) (store.AuditEntry, error) {
	var e store.AuditEntry
	var at pgtype.Timestamptz
	err := r.Scan(&e.ID, &at, &e.Who, &e.Action, &e.Target, &e.Count, &e.Detail)
	e.At = at.Time
	return e, err
}
