package or

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ v, def, want int }{{3, 7, 3}, {0, 7, 7}, {-1, 7, 7}} {
		if got := Positive(c.v, c.def); got != c.want {
			t.Errorf("Positive(%d, %d) = %d, want %d", c.v, c.def, got, c.want)
		}
	}
	if got := Positive(-time.Second, 5*time.Second); got != 5*time.Second {
		t.Errorf("Positive(-1s, 5s) = %v, want 5s", got)
	}
	if got := Positive(time.Millisecond, 5*time.Second); got != time.Millisecond {
		t.Errorf("Positive(1ms, 5s) = %v, want 1ms", got)
	}
}
