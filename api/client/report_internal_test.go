package client

import (
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/gritv1"
)

// TestBySize: results go in runs, in order, none over the bound but a
// result larger than it, which goes alone.
func TestBySize(t *testing.T) {
	t.Parallel()
	result := func(output int) workerResult {
		return workerResult{"w", &gritv1.Result{TaskId: 1, LeaseToken: 1,
			End: &gritv1.Result_Complete{Complete: &gritv1.Completed{Output: strings.Repeat("x", output)}}}}
	}
	items := []workerResult{result(400), result(400), result(10), result(2000), result(400)}
	got := bySize(items, []int{0, 1, 2, 3, 4}, 1000)
	want := [][]int{{0, 1, 2}, {3}, {4}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if got := bySize(items, []int{2, 4}, 1000); !slices.EqualFunc(got, [][]int{{2, 4}}, slices.Equal) {
		t.Errorf("runs of a subset %v", got)
	}
}
