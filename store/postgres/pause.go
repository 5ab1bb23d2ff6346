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
		return s.pool.QueryRow(ctx, s.sql(`WITH p AS (INSERT INTO $S.pauses AS p (scope, name, who) VALUES ($1, $2, $3)
			ON CONFLICT (scope, name) DO UPDATE SET who = p.who
			RETURNING p.scope, p.name, p.since, p.who)
			SELECT p.*, pg_notify($4, '') IS NULL FROM p`), string(p.Scope), p.Name, p.Who, s.pauseChannel).
			Scan(&got.Scope, &got.Name, &got.Since, &got.Who, new(bool))
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
		return s.pool.QueryRow(ctx, s.sql(`WITH d AS (DELETE FROM $S.pauses WHERE scope = $1 AND name = $2 RETURNING 1)
			SELECT (SELECT count(*) FROM d), pg_notify($3, '') IS NULL`), string(scope), name, s.pauseChannel).Scan(&n, new(bool))
	})
	if err != nil {
		return false, fmt.Errorf("resume %s %q: %w", scope, name, err)
	}
	return n > 0, nil
}

// WatchPauses makes the store a store.PauseWatcher whose pauses come from
// every process on the schema: Pause and Resume notify a channel of their
// own on commit, and WatchPauses listens to it on the store's listening
// connection, reconnecting as Wake does, and sends a value after reconnecting too
// (what was sent meanwhile is lost: the pauses must be read again).
func (s *Store) WatchPauses(ctx context.Context) (<-chan struct{}, error) {
	changed := make(chan struct{}, 1)
	got := func(string) { signal(changed) }
	if err := s.listenTo(ctx, s.pauseChannel, got, func() { close(changed) }); err != nil {
		return nil, fmt.Errorf("postgres: watch pauses: %w", err)
	}
	return changed, nil
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
