package grit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/schedule"
)

// A schedule enqueues a task of a kind at each of its slots: here every
// second; a cron expression in a time zone ("0 2 * * *" in
// Europe/Paris) is written the same way. Any number of clients may
// declare and tick it: each slot has one task.
func ExampleConfig_schedules() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{
		Schedules: []schedule.Schedule{{
			Name:  "heartbeat",
			Every: time.Second,
			Task:  schedule.Task{Kind: "report", Args: json.RawMessage(`{"to":"ops"}`)},
		}},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type report struct{ To string }
	done := make(chan struct{}, 1)
	grit.Handle(c, "report", func(ctx context.Context, r report) error {
		select {
		case done <- struct{}{}:
			fmt.Println("report to", r.To)
		default:
		}
		return nil
	}, grit.HandlerConfig{})
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	// Output: report to ops
}
