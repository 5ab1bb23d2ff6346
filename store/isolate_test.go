package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// fakeDB is a database for Isolate: it refuses a try that names any item
// of bad (naming the first in its message, as a trigger's error names
// its row), fails as a whole once down is set, and can commit the first
// item of a try before it fails (a driver that commits in steps).
type fakeDB struct {
	bad      map[int]bool
	downAt   int  // the try (1-based) from which the store is down; 0: never
	stepwise bool // the first item of a try is written before the rest fail
	tries    int
	written  []int
}

var errDown = errors.New("connection refused")

type refusal struct{ item int }

func (r refusal) Error() string { return fmt.Sprintf("item %d refused", r.item) }

func (d *fakeDB) try(items []int) ([]int, error) {
	d.tries++
	if d.downAt > 0 && d.tries >= d.downAt {
		return items, errDown
	}
	for _, i := range items {
		if d.bad[i] {
			if d.stepwise && !d.bad[items[0]] {
				d.written = append(d.written, items[0])
				return items[1:], refusal{i}
			}
			return items, refusal{i}
		}
	}
	d.written = append(d.written, items...)
	return nil, nil
}

func isRefusal(err error) bool { return errors.As(err, new(refusal)) }

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestIsolate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		db       fakeDB
		n        int
		batchErr bool
		refused  []int // the items refused, each with its own error
		lost     []int // the items not recorded because the store went down
		maxTries int
	}{
		"a batch that succeeds costs one try": {n: 30, maxTries: 1},
		"one refused item of thirty":          {db: fakeDB{bad: map[int]bool{17: true}}, n: 30, refused: []int{17}, maxTries: 1 + 2*5},
		"two refused items":                   {db: fakeDB{bad: map[int]bool{0: true, 29: true}}, n: 30, refused: []int{0, 29}, maxTries: 1 + 2*2*5},
		"every item refused":                  {db: fakeDB{bad: map[int]bool{0: true, 1: true, 2: true, 3: true}}, n: 4, refused: []int{0, 1, 2, 3}, maxTries: 7},
		"a store down is not split":           {db: fakeDB{downAt: 1}, n: 30, batchErr: true, maxTries: 1},
		"a store that goes down during the split": {db: fakeDB{bad: map[int]bool{3: true}, downAt: 3}, n: 8,
			lost: []int{0, 1, 2, 3, 4, 5, 6, 7}, maxTries: 3},
		"a store that commits in steps": {db: fakeDB{bad: map[int]bool{5: true}, stepwise: true}, n: 8, refused: []int{5}, maxTries: 1 + 2*3},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := make([]store.Finish, c.n)
			for i := range fs {
				fs[i] = store.Finish{TaskID: int64(100 + i), Token: int64(i + 1), State: task.Success}
			}
			errs := make([]error, c.n)
			err := store.Isolate(fs, errs, seq(c.n), c.db.try, isRefusal)
			if (err != nil) != c.batchErr {
				t.Fatalf("Isolate: %v; want a batch error: %v", err, c.batchErr)
			}
			if c.db.tries > c.maxTries {
				t.Errorf("%d tries, want at most %d", c.db.tries, c.maxTries)
			}
			for i, err := range errs {
				switch {
				case slices.Contains(c.refused, i):
					// Its own error: the refusal of a try of it alone.
					if !errors.Is(err, task.ErrRefused) || err.Error() != fmt.Sprintf("finish task %d with lease token %d: task: refused by the store: item %d refused", 100+i, i+1, i) {
						t.Errorf("item %d: %v, want its own refusal", i, err)
					}
				case slices.Contains(c.lost, i) && !slices.Contains(c.db.written, i):
					if !errors.Is(err, errDown) || errors.Is(err, task.ErrRefused) || !strings.Contains(err.Error(), "not recorded") {
						t.Errorf("item %d: %v, want not recorded: the store is down", i, err)
					}
				case err != nil:
					t.Errorf("item %d: %v, want written", i, err)
				}
			}
			if c.batchErr || len(c.lost) > 0 {
				return
			}
			want := slices.DeleteFunc(seq(c.n), func(i int) bool { return slices.Contains(c.refused, i) })
			got := slices.Sorted(slices.Values(c.db.written))
			if !slices.Equal(got, want) {
				t.Errorf("written %v, want %v", got, want)
			}
		})
	}
}
