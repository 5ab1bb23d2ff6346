package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
)

// Pause pauses p.Scope p.Name since now, or keeps the pause already there.
// Its update on conflict changes nothing; it is there because DO NOTHING
// returns no row, and a SELECT after it, in the same statement, would not
// see a pause that another transaction committed while this one waited.
func (s *Store) Pause(ctx context.Context, p store.Pause) (store.Pause, error) {
	if err := store.ValidatePause(p.Scope, p.Name); err != nil {
		return store.Pause{}, err
	}
	var got store.Pause
	err := retrying(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, s.sql(`INSERT INTO $S.pauses AS p (scope, name, who) VALUES ($1, $2, $3)
			ON CONFLICT (scope, name) DO UPDATE SET who = p.who
			RETURNING p.scope, p.name, p.since, p.who`), string(p.Scope), p.Name, p.Who).
			Scan(&got.Scope, &got.Name, &got.Since, &got.Who)
	})
	if err != nil {
		return store.Pause{}, fmt.Errorf("pause %s %q: %w", p.Scope, p.Name, err)
	}
	return got, nil
}

// Resume ends the pause of scope name, and reports whether there was one.
func (s *Store) Resume(ctx context.Context, scope store.Scope, name string) (bool, error) {
	if err := store.ValidatePause(scope, name); err != nil {
		return false, fmt.Errorf("resume: %w", err)
	}
	var n int64
	err := retrying(ctx, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, s.sql(`DELETE FROM $S.pauses WHERE scope = $1 AND name = $2`), string(scope), name)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("resume %s %q: %w", scope, name, err)
	}
	return n > 0, nil
}

// Pauses lists the pauses, by scope, then name.
func (s *Store) Pauses(ctx context.Context) ([]store.Pause, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT scope, name, since, who FROM $S.pauses ORDER BY scope, name`))
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	var out []store.Pause
	var p store.Pause
	_, err = pgx.ForEachRow(rows, []any{&p.Scope, &p.Name, &p.Since, &p.Who}, func() error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	return out, nil
}
