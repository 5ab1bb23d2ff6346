package engine

import (
	"context"
	"errors"
	"testing"
)

func TestAbandonedError(t *testing.T) {
	t.Parallel()
	ids := make([]int64, 12)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	for _, c := range []struct {
		ids  []int64
		want string
	}{
		{ids[:1], "engine: stop: 1 result not recorded, abandoned (tasks [1]; their leases lapse and the rescue decides): context deadline exceeded"},
		{ids, "engine: stop: 12 results not recorded, abandoned (tasks [1 2 3 4 5 6 7 8 9 10] and 2 more; their leases lapse and the rescue decides): context deadline exceeded"},
	} {
		err := abandonedError(c.ids, context.DeadlineExceeded)
		if err.Error() != c.want || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("abandonedError(%v) = %q, want %q wrapping the cause", c.ids, err, c.want)
		}
	}
}
