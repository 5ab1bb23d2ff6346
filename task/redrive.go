package task

// Redriven is what a redrive of a run did (Client.Redrive, grit redrive):
// the run as it is after it, RUNNING again, and the tasks it sent back to
// wait with fresh attempts, by id, in id order.
type Redriven struct {
	Run   Run     `json:"run"`
	Tasks []int64 `json:"tasks"`
}
