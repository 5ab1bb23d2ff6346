package postgres

import (
	"errors"
	"testing"

	"github.com/grit-run/grit/task"
)

func TestPlacedPutsRowsInClaimOrder(t *testing.T) {
	t.Parallel()
	ts := []task.Task{{ID: 30}, {ID: 10}, {ID: 20}}
	// Places may skip a number: a task due_tasks locked that the claim's
	// UPDATE could not see is not among the rows.
	got, err := placed(ts, []int64{5, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{10, 20, 30} {
		if got[i].ID != want {
			t.Errorf("place %d holds task %d, want %d", i+1, got[i].ID, want)
		}
	}
	for _, ords := range [][]int64{{1, 1, 2}, {0, 1, 2}, {-1, 2, 3}} {
		if _, err := placed(ts, ords); !errors.Is(err, errClaimOrder) {
			t.Errorf("places %v: error %v, want errClaimOrder", ords, err)
		}
	}
}
