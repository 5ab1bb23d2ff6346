package schedule_test

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/schedule"
)

// A schedule's slots go through a daylight-saving change: a daily job at
// a time the clocks skip runs at the change, once.
func ExampleTiming_Next() {
	s := schedule.Schedule{Name: "settle", Cron: "30 2 * * *", Zone: "America/New_York", Task: schedule.Task{Kind: "settle"}}
	tm, err := s.Timing()
	if err != nil {
		fmt.Println(err)
		return
	}
	ny, _ := time.LoadLocation("America/New_York")
	at := time.Date(2026, 3, 7, 0, 0, 0, 0, ny)
	for range 3 {
		at = tm.Next(at)
		fmt.Println(at.In(ny).Format("Mon Jan 2 15:04 MST"))
	}
	// Output:
	// Sat Mar 7 02:30 EST
	// Sun Mar 8 03:00 EDT
	// Mon Mar 9 02:30 EDT
}

// A slot's task has the slot in its idempotency key: any number of
// workers may enqueue it, and the store keeps one.
func ExampleKey() {
	fmt.Println(schedule.Key("settle", time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)))
	// Output: schedule:settle@2026-03-08T07:00:00Z
}
