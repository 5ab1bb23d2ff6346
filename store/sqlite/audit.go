package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/grit-run/grit/store"
)

const auditCols = `id, at, who, action, target, count, detail`

// Audit appends e to the log; its ID and, when zero, its At are the
// store's.
func (s *Store) Audit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	if err := store.ValidateAudit(e); err != nil {
		return store.AuditEntry{}, err
	}
	var got store.AuditEntry
	err := s.w.do(ctx, func(x *wtx) error {
		at := e.At
		if at.IsZero() {
			at = x.now
		}
		var err error
		got, err = scanAudit(x.queryRow(`INSERT INTO audit (at, who, action, target, count, detail)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING `+auditCols,
			at.UnixMicro(), e.Who, e.Action, e.Target, e.Count, e.Detail))
		return err
	})
	if err != nil {
		return store.AuditEntry{}, fmt.Errorf("audit %q by %q: %w", e.Action, e.Who, err)
	}
	return got, nil
}

// AuditLog lists entries newest first, walking the primary key backward
// from beforeID.
func (s *Store) AuditLog(ctx context.Context, beforeID int64, limit int) ([]store.AuditEntry, error) {
	q, args := `SELECT `+auditCols+` FROM audit`, []any{}
	if beforeID != 0 {
		q, args = q+` WHERE id < ?`, append(args, beforeID)
	}
	q += ` ORDER BY id DESC`
	if limit > 0 {
		q, args = q+` LIMIT ?`, append(args, limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer rows.Close()
	var es []store.AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return es, nil
}

func scanAudit(r scanner) (store.AuditEntry, error) {
	var e store.AuditEntry
	var at sql.NullInt64
	err := r.Scan(&e.ID, &at, &e.Who, &e.Action, &e.Target, &e.Count, &e.Detail)
	e.At = fromMicros(at)
	return e, err
}
