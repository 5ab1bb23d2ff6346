package store

import (
	"fmt"

	"github.com/grit-run/grit/task"
)

// Isolate is how a driver's Finish keeps one refused item from failing
// its batch. It writes the items of fs that items names with try; when
// try fails because the database refused what some of them would write
// (refused says so of its error: a trigger raised, a constraint failed,
// not a lost connection), it finds those items by trying the ones left
// unwritten in halves, and each half of a half that fails, down to single
// items, so that every other item is written. A refused item gets
// task.ErrRefused, with the database's error of its own try, in errs:
// no item is given the error of another.
//
// try writes the items it is given (each applied, or its lease found
// lost, as Finish does) and returns nil, or fails and returns those it
// did not write: all of them, unless it commits in steps.
//
// A batch that is written at the first try costs that try alone. The
// error is for the batch as a whole: the first try failed in a way that
// refused does not claim (the store is down, read-only, full) and wrote
// nothing; the caller tries the batch again later, as it would have, and
// it is not split (an outage would otherwise cost a try per item). When
// the store fails so after part of the batch was written, or during the
// split, the items not written get that error in errs (wrapped: "not
// recorded") and are not tried again here.
func Isolate(fs []Finish, errs []error, items []int, try func(items []int) (rest []int, err error), refused func(error) bool) error {
	rest, err := try(items)
	switch {
	case err == nil:
		return nil
	case !refused(err) && len(rest) == len(items):
		return err
	}
	x := &isolator{fs: fs, errs: errs, try: try, refused: refused}
	x.split(rest, err)
	return nil
}

type isolator struct {
	fs      []Finish
	errs    []error
	try     func(items []int) ([]int, error)
	refused func(error) bool
	down    error // the store failed as a whole: what is left is not tried
}

// split takes items that were not written by a try that failed with err.
func (x *isolator) split(items []int, err error) {
	if len(items) == 0 {
		return
	}
	if x.down == nil && !x.refused(err) {
		x.down = err
	}
	if x.down != nil {
		for _, i := range items {
			x.errs[i] = fmt.Errorf("finish task %d with lease token %d: not recorded: %w", x.fs[i].TaskID, x.fs[i].Token, x.down)
		}
		return
	}
	if len(items) == 1 {
		i := items[0]
		x.errs[i] = fmt.Errorf("finish task %d with lease token %d: %w: %w", x.fs[i].TaskID, x.fs[i].Token, task.ErrRefused, err)
		return
	}
	mid := len(items) / 2
	for _, half := range [][]int{items[:mid], items[mid:]} {
		if x.down != nil {
			x.split(half, x.down)
			continue
		}
		if rest, err := x.try(half); err != nil {
			x.split(rest, err)
		}
	}
}
