package ops

import "github.com/grit-run/grit/task"

// RunProgress is how far a run has come, as operators read it.
type RunProgress struct {
	// Done counts the tasks that have ended for good (task.State's
	// Terminal), of Total.
	Done, Total int
	// Blocked says that the run is RUNNING but nothing of it can go on
	// until an operator acts: a task is a dead letter, and none runs or
	// waits to run (those left wait for it).
	Blocked bool
}

// Percent is Done of Total, from 0 to 100.
func (p RunProgress) Percent() int {
	if p.Total == 0 {
		return 0
	}
	return p.Done * 100 / p.Total
}

// ProgressOf is a run's progress from its tasks' counts by state
// (store.Console's RunCounts).
func ProgressOf(run task.State, counts map[task.State]int) RunProgress {
	var p RunProgress
	for s, n := range counts {
		p.Total += n
		if s.Terminal() {
			p.Done += n
		}
	}
	moving := counts[task.Ready] + counts[task.Running] + counts[task.Retrying] + counts[task.Sensing]
	p.Blocked = run == task.Running && counts[task.DeadLetter] > 0 && moving == 0
	return p
}
