package keep

import (
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ took, floor, want time.Duration }{
		{time.Millisecond, 2 * time.Second, 2 * time.Second},         // a quick read: the floor
		{500 * time.Millisecond, 2 * time.Second, 10 * time.Second},  // twenty times what it took
		{10 * time.Second, 2 * time.Second, time.Minute},             // at most a minute
		{10 * time.Second, 5 * time.Minute, 5 * time.Minute},         // a longer floor wins
		{200 * time.Millisecond, 10 * time.Second, 10 * time.Second}, // the metrics' scrape floor
	} {
		if got := For(c.took, c.floor); got != c.want {
			t.Errorf("For(%v, %v) = %v, want %v", c.took, c.floor, got, c.want)
		}
	}
}
