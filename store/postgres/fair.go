package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// stamps are the stamps of tasks about to be copied in (copyTasks), for
// their fair turn: each lane's base and step read once (fair_lane), the
// tasks due by now ranked in due order within their lane
// (store.FairRanks), as insertTasksSQL stamps them; NULL for the tasks
// not due yet, which the claim that finds them due stamps.
func (s *Store) stamps(ctx context.Context, q pgx.Tx, ts []task.NewTask, now time.Time) ([]pgtype.Float8, error) {
	ranks := store.FairRanks(ts, now)
	lanes := store.Lanes(ts, ranks)
	queues, prios, tenants := make([]string, len(lanes)), make([]int32, len(lanes)), make([]string, len(lanes))
	for i, l := range lanes {
		queues[i], prios[i], tenants[i] = l.Queue, int32(l.Priority), l.Tenant
	}
	rows, err := q.Query(ctx, s.sql(`SELECT u.o, f.base, f.step
		FROM unnest($1::text[], $2::int[], $3::text[]) WITH ORDINALITY AS u (queue, priority, tenant, o)
			CROSS JOIN LATERAL $S.fair_lane(u.queue, u.priority, u.tenant) f`), queues, prios, tenants)
	if err != nil {
		return nil, fmt.Errorf("read fair turns: %w", err)
	}
	type place struct{ base, step float64 }
	at := make(map[store.Lane]place, len(lanes))
	for rows.Next() {
		var o int64
		var p place
		if err := rows.Scan(&o, &p.base, &p.step); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read fair turns: %w", err)
		}
		at[lanes[o-1]] = p
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read fair turns: %w", err)
	}
	vts := make([]pgtype.Float8, len(ts))
	for i, t := range ts {
		if ranks[i] > 0 {
			p := at[store.LaneOf(t)]
			vts[i] = pgtype.Float8{Float64: p.base + float64(ranks[i])*p.step, Valid: true}
		}
	}
	return vts, nil
}

// SetWeight sets a tenant's weight in fair claims; store.DefaultWeight
// removes it.
func (s *Store) SetWeight(ctx context.Context, tenant string, weight int) error {
	if err := store.ValidateWeight(tenant, weight); err != nil {
		return fmt.Errorf("set weight: %w", err)
	}
	q := `INSERT INTO $S.tenant_weights (tenant, weight) VALUES ($1, $2)
		ON CONFLICT (tenant) DO UPDATE SET weight = excluded.weight`
	args := []any{tenant, weight}
	if weight == store.DefaultWeight {
		q, args = `DELETE FROM $S.tenant_weights WHERE tenant = $1`, args[:1]
	}
	err := retrying(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, s.sql(q), args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("set weight of tenant %q: %w", tenant, err)
	}
	return nil
}

// Weights returns the weights set, by tenant.
func (s *Store) Weights(ctx context.Context) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, s.sql(`SELECT tenant, weight FROM $S.tenant_weights`))
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var t string
		var w int32
		if err := rows.Scan(&t, &w); err != nil {
			return nil, fmt.Errorf("weights: %w", err)
		}
		out[t] = int(w)
	}
	return out, rows.Err()
}
