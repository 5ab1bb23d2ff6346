package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/grit-run/grit/store"
)

// Pause pauses p.Scope p.Name since now, or keeps the pause already there.
// Its update on conflict changes nothing; it is there so that the
// statement returns the row it kept, as DO NOTHING would not.
func (s *Store) Pause(ctx context.Context, p store.Pause) (store.Pause, error) {
	if err := store.ValidatePause(p.Scope, p.Name); err != nil {
		return store.Pause{}, err
	}
	var got store.Pause
	err := s.w.do(ctx, func(x *wtx) error {
		var since sql.NullInt64
		err := x.queryRow(`INSERT INTO pauses (scope, name, since, who) VALUES (?, ?, ?, ?)
			ON CONFLICT (scope, name) DO UPDATE SET who = pauses.who
			RETURNING scope, name, since, who`, string(p.Scope), p.Name, x.now.UnixMicro(), p.Who).
			Scan(&got.Scope, &got.Name, &since, &got.Who)
		got.Since = fromMicros(since)
		return err
	})
	if err != nil {
		return store.Pause{}, fmt.Errorf("pause %s %q: %w", p.Scope, p.Name, err)
	}
	s.pauses.Send(struct{}{})
	return got, nil
}

// Resume ends the pause of scope name, and reports whether there was one.
func (s *Store) Resume(ctx context.Context, scope store.Scope, name string) (bool, error) {
	if err := store.ValidatePause(scope, name); err != nil {
		return false, fmt.Errorf("resume: %w", err)
	}
	var n int64
	err := s.w.do(ctx, func(x *wtx) error {
		res, err := x.exec(`DELETE FROM pauses WHERE scope = ? AND name = ?`, string(scope), name)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("resume %s %q: %w", scope, name, err)
	}
	s.pauses.Send(struct{}{})
	return n > 0, nil
}

// WatchPauses makes the store a store.PauseWatcher: it sees the pauses and
// resumes made through this handle, once committed. Another process's
// pause is heard at the worker's next heartbeat; the claims, which read
// the pauses in their transaction, take none of its tasks once it has
// committed.
func (s *Store) WatchPauses(ctx context.Context) (<-chan struct{}, error) {
	return s.pauses.Watch(ctx), nil
}

// Pauses lists the pauses, by scope, then name.
func (s *Store) Pauses(ctx context.Context) ([]store.Pause, error) {
	rows, err := s.query(ctx, `SELECT scope, name, since, who FROM pauses ORDER BY scope, name`)
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	defer rows.Close()
	var out []store.Pause
	for rows.Next() {
		var p store.Pause
		var since sql.NullInt64
		if err := rows.Scan(&p.Scope, &p.Name, &since, &p.Who); err != nil {
			return nil, fmt.Errorf("pauses: %w", err)
		}
		p.Since = fromMicros(since)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	return out, nil
}
