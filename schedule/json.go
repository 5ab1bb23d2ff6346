package schedule

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/task"
)

// Durations are written as Go durations ("2s", "1h0m0s") in JSON, as
// people read them, and read back from that or from nanoseconds.

type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	if time.Duration(d) == task.AutoTimeout { // a task's timeout: learned
		return json.Marshal("auto")
	}
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("a duration: want a string such as \"30s\": %s", b)
		}
		*d = jsonDuration(n)
		return nil
	}
	if s == "auto" {
		*d = jsonDuration(task.AutoTimeout)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration: %w", err)
	}
	*d = jsonDuration(v)
	return nil
}

type scheduleJSON struct {
	Name       string       `json:"name"`
	Cron       string       `json:"cron,omitempty"`
	Every      jsonDuration `json:"every,omitempty"`
	Zone       string       `json:"zone,omitempty"`
	Jitter     jsonDuration `json:"jitter,omitempty"`
	Overlap    Overlap      `json:"overlap,omitempty"`
	CatchUp    jsonDuration `json:"catch_up,omitempty"`
	PauseAfter int          `json:"pause_after,omitempty"`
	Task       Task         `json:"task"`
}

// MarshalJSON writes s with its durations as Go durations.
func (s Schedule) MarshalJSON() ([]byte, error) {
	return json.Marshal(scheduleJSON{s.Name, s.Cron, jsonDuration(s.Every), s.Zone, jsonDuration(s.Jitter), s.Overlap,
		jsonDuration(s.CatchUp), s.PauseAfter, s.Task})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	var v scheduleJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Schedule{v.Name, v.Cron, time.Duration(v.Every), v.Zone, time.Duration(v.Jitter), v.Overlap, time.Duration(v.CatchUp), v.PauseAfter, v.Task}
	return nil
}

type taskJSON struct {
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args,omitempty"`
	Queue       string          `json:"queue,omitempty"`
	Group       string          `json:"group,omitempty"`
	Tenant      string          `json:"tenant,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	Policy      string          `json:"policy,omitempty"`
	Timeout     jsonDuration    `json:"timeout,omitempty"`
	Grace       jsonDuration    `json:"grace,omitempty"`
	PoisonAfter int             `json:"poison_after,omitempty"`
}

// MarshalJSON writes t with its durations as Go durations.
func (t Task) MarshalJSON() ([]byte, error) {
	return json.Marshal(taskJSON{t.Kind, t.Args, t.Queue, t.Group, t.Tenant, t.Priority, t.Policy, jsonDuration(t.Timeout), jsonDuration(t.Grace), t.PoisonAfter})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Task) UnmarshalJSON(b []byte) error {
	var v taskJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Task{v.Kind, v.Args, v.Queue, v.Group, v.Tenant, v.Priority, v.Policy, time.Duration(v.Timeout), time.Duration(v.Grace), v.PoisonAfter}
	return nil
}
