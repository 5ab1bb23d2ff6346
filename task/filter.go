package task

import "time"

// Filter selects tasks. Every field set narrows the selection; the zero
// Filter selects every task.
type Filter struct {
	// IDs, when set, keeps only these tasks (a ticker's or a page's
	// handful: one query for them all).
	IDs         []int64
	RunID       int64
	States      []State
	Kind        string
	Name        string // the task's name, matched exactly (a task file's task names)
	Queue       string
	Group       string
	Tenant      string
	Fingerprint string // the latest failure's fingerprint
	// Text is matched, without regard to case, as a substring of the
	// task's args (their JSON text), its latest error or its name. It is
	// text, not a pattern: % and _ stand for themselves. Case is ignored
	// for ASCII letters at least: other letters may be told apart by case
	// in args, and by the SQLite store everywhere.
	Text string
	// CreatedFrom and CreatedTo bound the time the task was enqueued:
	// from included, to excluded; zero is no bound.
	CreatedFrom, CreatedTo time.Time
	// Newest lists the newest tasks first (by id, descending); the
	// default is the oldest first.
	Newest bool
	// AfterID and BeforeID page by id (keyset): only ids above AfterID,
	// and only ids below BeforeID; 0 is no bound.
	AfterID, BeforeID int64
	Limit             int // 0: all
}

// Edge says task To needs task From.
type Edge struct {
	From, To int64
}

// RunFilter selects runs.
type RunFilter struct {
	States   []State
	Name     string // only the runs of this name (a task file's runs share its name); "" is any
	BeforeID int64  // for paging: only ids below this; 0 is no bound
	Limit    int    // 0: all
}
