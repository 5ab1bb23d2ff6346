package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/grit-run/grit/schedule"
)

// BenchmarkTick is one worker's tick of 100 schedules: none due (what
// every worker does every second between slots), and each due (a slot of
// every schedule enqueued with its new state, one write each).
func BenchmarkTick(b *testing.B) {
	for name, open := range bothStores {
		b.Run(name, func(b *testing.B) {
			st := open(b)
			t0 := time.Now().Add(-time.Hour).Truncate(time.Hour)
			for i := range 100 {
				s := schedule.Schedule{Name: fmt.Sprintf("s%03d", i), Every: time.Second, Overlap: schedule.Allow, Task: schedule.Task{Kind: "tick"}}
				if err := Declare(ctx, st, t0, s); err != nil {
					b.Fatal(err)
				}
			}
			k := &Ticker{Store: st}
			b.Run("none-due", func(b *testing.B) {
				for b.Loop() {
					if err := k.Tick(ctx, t0); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("all-due", func(b *testing.B) {
				at := t0
				for b.Loop() {
					at = at.Add(time.Second)
					if err := k.Tick(ctx, at); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
