package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Finish ends attempts in one transaction: one statement ends the plain
// successes of a whole batch on their task rows, one writes the other
// attempts' rows and one moves their tasks, then the dependents and runs
// of the tasks that ended move. An item whose task is not RUNNING under its
// Token gets task.ErrLeaseLost and writes nothing; an item with a state
// Finish cannot set gets task.ErrInvalid; an item the database refuses (a
// trigger's RAISE, a constraint) gets task.ErrRefused, and the others are
// written (store.Isolate: each try is a request of its own, which the
// writer rolls back whole when it fails).
func (s *Store) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	errs, todo := store.CheckFinishes(fs)
	if len(todo) == 0 {
		return errs, nil
	}
	applied := make(map[int]bool, len(todo))
	try := func(items []int) ([]int, error) {
		var done map[int]bool
		err := s.w.do(ctx, func(x *wtx) error {
			var err error
			done, err = finish(x, fs, items)
			return err
		})
		if err != nil {
			return items, err
		}
		maps.Copy(applied, done) // committed
		return nil, nil
	}
	if err := store.Isolate(fs, errs, todo, try, refused); err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	for _, i := range todo {
		if errs[i] == nil && !applied[i] {
			errs[i] = fmt.Errorf("finish task %d with lease token %d: %w", fs[i].TaskID, fs[i].Token, task.ErrLeaseLost)
		}
	}
	return errs, nil
}

// refused reports whether err is SQLite refusing what a statement would
// write, for the data of its rows: a constraint, or a trigger's RAISE
// (SQLITE_CONSTRAINT), a value of the wrong type (SQLITE_MISMATCH) or too
// big (SQLITE_TOOBIG). Another row's write may well go through, so a
// batch is split to find the rows at fault. A full disk, an I/O error, a
// busy or closed database fail every row alike.
func refused(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG:
		return true
	}
	return false
}

// finish applies the items todo of fs and returns which applied. A task
// named twice is finished in a later round, where its second item meets the
// state the first left (and so, normally, loses).
func finish(x *wtx, fs []store.Finish, todo []int) (map[int]bool, error) {
	applied := make(map[int]bool, len(todo))
	for _, round := range store.Rounds(fs, todo) {
		for _, c := range chunks(len(round), maxValuesRows) {
			items := round[c[0]:c[1]]
			moved, err := finishTasks(x, fs, items)
			if err != nil {
				return nil, err
			}
			// Deliveries join the run of the task that published them, before
			// the run is settled: a run ends when they have too.
			for _, i := range items {
				if run, ok := moved[fs[i].TaskID]; ok && len(fs[i].Publish) > 0 {
					if _, err := publish(x, run, fs[i].Publish); err != nil {
						return nil, err
					}
				}
				if _, ok := moved[fs[i].TaskID]; ok {
					if err := enqueueAll(x, store.FinishEnqueues(fs[i])); err != nil {
						return nil, err
					}
				}
			}
			if err := afterFinish(x, fs, items, moved); err != nil {
				return nil, err
			}
			if err := wakeAwaiting(x, fs, items, moved); err != nil {
				return nil, err
			}
			if err := awaitTasks(x, fs, items, moved); err != nil {
				return nil, err
			}
			if err := endAwaited(x, store.EndedTasks(fs, items, moved)); err != nil {
				return nil, err
			}
			for _, i := range items {
				_, ok := moved[fs[i].TaskID]
				applied[i] = applied[i] || ok
				x.due = x.due || ok && fs[i].State.Waiting() // a retry, a release, a sensor's next look
			}
		}
	}
	return applied, nil
}

// afterFinish moves what the ends of the tasks of runs move.
func afterFinish(x *wtx, fs []store.Finish, items []int, moved map[int64]int64) error {
	var inRuns []int
	for _, i := range items {
		if moved[fs[i].TaskID] != 0 {
			inRuns = append(inRuns, i)
		}
	}
	if len(inRuns) == 0 {
		return nil
	}
	return propagateFinish(x, fs, inRuns, moved)
}

// propagateFinish moves the dependents of the run tasks that succeeded or
// failed, then settles their runs.
func propagateFinish(x *wtx, fs []store.Finish, done []int, runOf map[int64]int64) error {
	succeeded, failed, runs := store.Ended(fs, done, runOf)
	if err := satisfy(x, succeeded); err != nil {
		return err
	}
	if err := blockDownstream(x, failed, task.UpstreamFailed); err != nil {
		return err
	}
	return settleRuns(x, runs)
}

// enqueueAll inserts a finish's tasks outside any run.
func enqueueAll(x *wtx, ts []task.NewTask) error {
	for _, t := range ts {
		if _, err := enqueueIn(x, 0, t, nil); err != nil {
			return fmt.Errorf("enqueue %s: %w", t.Kind, err)
		}
	}
	return nil
}
