package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/grit-run/grit/store"
)

// Fair claims (docs/engine.md): a due waiting task carries a virtual time,
// vt, and the claim takes tasks by priority, then vt (tasks_fair, migration
// 0022). A lane's tasks (store.Lane) are stamped one step (1 ÷ the tenant's
// weight) apart, after the lane's last stamp still waiting or, when none
// is, after the lane's clock, the largest vt claimed in its queue at its
// priority: a tenant that comes with nothing waiting takes its turn at
// once, not after every task waiting before it.

// laneSQL is a lane's base and step: the largest vt of its waiting tasks
// or its clock (for a queue with none yet, the largest clock of the
// priority), and 1 ÷ its tenant's weight (store.DefaultWeight without one).
const laneSQL = `SELECT max(
	coalesce((SELECT max(vt) FROM tasks INDEXED BY tasks_lane
		WHERE queue = ?1 AND priority = ?2 AND tenant = ?3 AND ` + waitingStates + ` AND vt IS NOT NULL), -1e308),
	coalesce((SELECT vt FROM fair_clocks WHERE queue = ?1 AND priority = ?2),
		(SELECT max(vt) FROM fair_clocks WHERE priority = ?2), 0)),
	1.0 / coalesce((SELECT weight FROM tenant_weights WHERE tenant = ?3), ?4)`

// stamps hands out the stamps of one transaction's lanes, reading each
// lane's base once.
type stamps struct {
	x     *wtx
	lanes map[store.Lane]*laneStamp
}

type laneStamp struct{ base, step float64 }

func newStamps(x *wtx) *stamps { return &stamps{x: x, lanes: map[store.Lane]*laneStamp{}} }

func (s *stamps) lane(l store.Lane) (*laneStamp, error) {
	if ls, ok := s.lanes[l]; ok {
		return ls, nil
	}
	ls := &laneStamp{}
	err := s.x.queryRow(laneSQL, l.Queue, l.Priority, l.Tenant, store.DefaultWeight).Scan(&ls.base, &ls.step)
	if err != nil {
		return nil, fmt.Errorf("read the fair turn of tenant %q: %w", l.Tenant, err)
	}
	s.lanes[l] = ls
	return ls, nil
}

// at is the stamp of the lane's rank-th task of this transaction, from 1.
func (s *stamps) at(l store.Lane, rank int) (float64, error) {
	ls, err := s.lane(l)
	if err != nil {
		return 0, err
	}
	return ls.base + float64(rank)*ls.step, nil
}

// unstampedSQL finds the tasks due (by ?1) without a stamp, by due time.
const unstampedSQL = `SELECT id, queue, priority, tenant FROM tasks INDEXED BY tasks_unstamped
	WHERE ` + waitingStates + ` AND vt IS NULL AND next_at <= ?1 ORDER BY next_at, id LIMIT ?2`

// stampDue stamps the waiting tasks that came due without a stamp (a
// retry, a snooze, a scheduled task, a dependent made ready, a task given
// back), in due order: each takes its turn from the time it is due, so a
// tenant's retries do not jump the queue.
func stampDue(x *wtx) error {
	rows, err := x.query(unstampedSQL, x.now.UnixMicro(), store.StampBatch)
	if err != nil {
		return fmt.Errorf("stamp due tasks: %w", err)
	}
	type due struct {
		id   int64
		lane store.Lane
	}
	var ds []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.id, &d.lane.Queue, &d.lane.Priority, &d.lane.Tenant); err != nil {
			rows.Close()
			return fmt.Errorf("stamp due tasks: %w", err)
		}
		ds = append(ds, d)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("stamp due tasks: %w", err)
	}
	st, rank := newStamps(x), map[store.Lane]int{}
	for _, d := range ds {
		rank[d.lane]++
		vt, err := st.at(d.lane, rank[d.lane])
		if err != nil {
			return err
		}
		if _, err := x.exec(`UPDATE tasks SET vt = ? WHERE id = ?`, vt, d.id); err != nil {
			return fmt.Errorf("stamp due tasks: %w", err)
		}
	}
	return nil
}

// advanceClocks moves the clocks of the lanes a claim took from to the
// largest vt it took in each queue and priority.
func advanceClocks(x *wtx, claimed []claimTask) error {
	type key struct {
		queue    string
		priority int
	}
	top := map[key]float64{}
	for _, d := range claimed {
		if !d.vt.Valid {
			continue
		}
		k := key{d.queue, d.priority}
		if v, ok := top[k]; !ok || d.vt.Float64 > v {
			top[k] = d.vt.Float64
		}
	}
	for k, v := range top {
		_, err := x.exec(`INSERT INTO fair_clocks (queue, priority, vt) VALUES (?, ?, ?)
			ON CONFLICT (queue, priority) DO UPDATE SET vt = max(vt, excluded.vt)`, k.queue, k.priority, v)
		if err != nil {
			return fmt.Errorf("advance the fair clock of queue %q: %w", k.queue, err)
		}
	}
	return nil
}

// claimTask is a task a claim takes, with what the claim needs of it.
type claimTask struct {
	id       int64
	due      sql.NullInt64
	vt       sql.NullFloat64
	queue    string
	priority int
}

// SetWeight sets a tenant's weight in fair claims; store.DefaultWeight
// removes it.
func (s *Store) SetWeight(ctx context.Context, tenant string, weight int) error {
	if err := store.ValidateWeight(tenant, weight); err != nil {
		return fmt.Errorf("set weight: %w", err)
	}
	err := s.w.do(ctx, func(x *wtx) error {
		if weight == store.DefaultWeight {
			_, err := x.exec(`DELETE FROM tenant_weights WHERE tenant = ?`, tenant)
			return err
		}
		_, err := x.exec(`INSERT INTO tenant_weights (tenant, weight) VALUES (?, ?)
			ON CONFLICT (tenant) DO UPDATE SET weight = excluded.weight`, tenant, weight)
		return err
	})
	if err != nil {
		return fmt.Errorf("set weight of tenant %q: %w", tenant, err)
	}
	return nil
}

// Weights returns the weights set, by tenant.
func (s *Store) Weights(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, `SELECT tenant, weight FROM tenant_weights`)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var t string
		var w int
		if err := rows.Scan(&t, &w); err != nil {
			return nil, fmt.Errorf("weights: %w", err)
		}
		out[t] = w
	}
	return out, rows.Err()
}
