package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
)

// SetRate sets a queue's, kind's, group's or tenant's rate; a rate of 0
// removes it. A rate set again keeps its bucket.
func (s *Store) SetRate(ctx context.Context, r store.Rate) error {
	if err := store.ValidateRate(r); err != nil {
		return fmt.Errorf("set rate: %w", err)
	}
	var err error
	if r.Limit.Rate == 0 {
		_, err = s.pool.Exec(ctx, s.sql(`DELETE FROM $S.rates WHERE scope = $1 AND name = $2`), string(r.Scope), r.Name)
	} else {
		_, err = s.pool.Exec(ctx, s.sql(`INSERT INTO $S.rates (scope, name, rate, burst) VALUES ($1, $2, $3, $4)
			ON CONFLICT (scope, name) DO UPDATE SET rate = excluded.rate, burst = excluded.burst`),
			string(r.Scope), r.Name, r.Limit.Rate, r.Limit.Burst)
	}
	if err != nil {
		return fmt.Errorf("set rate of %s %q: %w", r.Scope, r.Name, err)
	}
	return nil
}

// Rates returns every rate, by scope and name, with its bucket.
func (s *Store) Rates(ctx context.Context) ([]store.Rate, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT scope, name, rate, burst, bucket FROM $S.rates ORDER BY scope, name`))
	if err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	}
	out, err := collectRates(rows)
	if err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	}
	return out, nil
}

func collectRates(rows pgx.Rows) ([]store.Rate, error) {
	var out []store.Rate
	var r store.Rate
	var js []byte
	_, err := pgx.ForEachRow(rows, []any{&r.Scope, &r.Name, &r.Limit.Rate, &r.Limit.Burst, &js}, func() error {
		r.Bucket = rate.Bucket{}
		if err := json.Unmarshal(js, &r.Bucket); err != nil {
			return fmt.Errorf("bucket of %s %q: %w", r.Scope, r.Name, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// TakeRates changes the rates of keys with fn and writes back their
// buckets, in one transaction that locks their rows in key order (so
// that two claimers never wait on each other's locks in a circle).
func (s *Store) TakeRates(ctx context.Context, keys []store.RateKey, fn func(map[store.RateKey]*store.Rate)) error {
	if err := store.ValidateRateKeys(keys); err != nil {
		return fmt.Errorf("take rates: %w", err)
	}
	if len(keys) == 0 {
		return nil
	}
	scopes, names := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		scopes[i], names[i] = string(k.Scope), k.Name
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.sql(`SELECT r.scope, r.name, r.rate, r.burst, r.bucket FROM $S.rates r
			JOIN unnest($1::text[], $2::text[]) AS k (scope, name) ON r.scope = k.scope AND r.name = k.name
			ORDER BY r.scope COLLATE "C", r.name COLLATE "C" FOR UPDATE OF r`), scopes, names)
		if err != nil {
			return err
		}
		rs, err := collectRates(rows)
		if err != nil || len(rs) == 0 {
			return err
		}
		got := make(map[store.RateKey]*store.Rate, len(rs))
		for i := range rs {
			got[rs[i].RateKey] = &rs[i]
		}
		fn(got)
		us, un := make([]string, 0, len(got)), make([]string, 0, len(got))
		var ub []string
		for _, k := range slices.SortedFunc(maps.Keys(got), store.RateKey.Compare) {
			b, err := json.Marshal(got[k].Bucket)
			if err != nil {
				return err
			}
			us, un, ub = append(us, string(k.Scope)), append(un, k.Name), append(ub, string(b))
		}
		_, err = tx.Exec(ctx, s.sql(`UPDATE $S.rates r SET bucket = u.bucket::jsonb
			FROM unnest($1::text[], $2::text[], $3::text[]) AS u (scope, name, bucket)
			WHERE r.scope = u.scope AND r.name = u.name`), us, un, ub)
		return err
	})
	if err != nil {
		return fmt.Errorf("take rates: %w", err)
	}
	return nil
}
