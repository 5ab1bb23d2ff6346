package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/grit-run/grit/store"
)

// SetRate sets a queue's, kind's, group's or tenant's rate; a rate of 0
// removes it. A rate set again keeps its bucket.
func (s *Store) SetRate(ctx context.Context, r store.Rate) error {
	if err := store.ValidateRate(r); err != nil {
		return fmt.Errorf("set rate: %w", err)
	}
	err := s.w.do(ctx, func(x *wtx) error {
		if r.Limit.Rate == 0 {
			_, err := x.exec(`DELETE FROM rates WHERE scope = ? AND name = ?`, string(r.Scope), r.Name)
			return err
		}
		_, err := x.exec(`INSERT INTO rates (scope, name, rate, burst) VALUES (?, ?, ?, ?)
			ON CONFLICT (scope, name) DO UPDATE SET rate = excluded.rate, burst = excluded.burst`,
			string(r.Scope), r.Name, r.Limit.Rate, r.Limit.Burst)
		return err
	})
	if err != nil {
		return fmt.Errorf("set rate of %s %q: %w", r.Scope, r.Name, err)
	}
	return nil
}

// Rates returns every rate, by scope and name, with its bucket.
func (s *Store) Rates(ctx context.Context) ([]store.Rate, error) {
	rows, err := s.query(ctx, `SELECT scope, name, rate, burst, bucket FROM rates ORDER BY scope, name`)
	if err != nil {
		return nil, fmt.Errorf("rates: %w", err)
	}
	defer rows.Close()
	var out []store.Rate
	for rows.Next() {
		r, err := scanRate(rows)
		if err != nil {
			return nil, fmt.Errorf("rates: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRate(sc scanner) (store.Rate, error) {
	var r store.Rate
	var js string
	if err := sc.Scan(&r.Scope, &r.Name, &r.Limit.Rate, &r.Limit.Burst, &js); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(js), &r.Bucket); err != nil {
		return r, fmt.Errorf("bucket of %s %q: %w", r.Scope, r.Name, err)
	}
	return r, nil
}

// TakeRates changes the rates of keys with fn and writes back their
// buckets, in one transaction of the store's one writer.
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
	err := s.w.do(ctx, func(x *wtx) error {
		rows, err := x.query(`SELECT r.scope, r.name, r.rate, r.burst, r.bucket FROM rates r
			JOIN json_each(?) s JOIN json_each(?) n ON s.key = n.key AND r.scope = s.value AND r.name = n.value`,
			jsonList(scopes), jsonList(names))
		if err != nil {
			return err
		}
		got := map[store.RateKey]*store.Rate{}
		for rows.Next() {
			r, err := scanRate(rows)
			if err != nil {
				rows.Close()
				return err
			}
			got[r.RateKey] = &r
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(got) == 0 {
			return err
		}
		fn(got)
		for _, k := range slices.SortedFunc(maps.Keys(got), store.RateKey.Compare) {
			b, err := json.Marshal(got[k].Bucket)
			if err != nil {
				return err
			}
			if _, err := x.exec(`UPDATE rates SET bucket = ? WHERE scope = ? AND name = ?`, string(b), string(k.Scope), k.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("take rates: %w", err)
	}
	return nil
}
