package taskfile

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
)

// File is a parsed, valid task file.
type File struct {
	Path        string // as given to Parse or Load; used in errors
	Name        string // the run's name
	MaxFailures int    // the run fails when more tasks than this fail; 0: no limit
	Tasks       []Task // in the file's order

	// Schedules are the file's periodic tasks, in the file's order, each
	// enqueuing one of Tasks (one without needs) as NewRun builds it.
	// A run does not hold them: they are declared in a store on their own.
	Schedules []schedule.Schedule

	// Limits are the limits of running attempts and the rates the file
	// sets, in the file's order: grit submit and grit run set them in the
	// store before they submit the run.
	Limits []Limit
}

// Task is one task of a file, with the file's defaults applied.
type Task struct {
	Name string
	Line int // where the task's name is written; 0 for a task built in Go

	// Exec is the process to run: Argv (a run list) or Shell (a run
	// string), Env as KEY=VALUE sorted by key, Dir and the exit-code lists.
	Exec task.Exec
	// Needs names the tasks of the same file that must succeed first, each
	// once, in the order written.
	Needs []string

	// Policy is the retry policy, set when PolicySet (the task or the
	// defaults have a retry key); otherwise the engine's default applies.
	Policy    retry.Policy
	PolicySet bool

	Timeout     time.Duration // 0: none; task.AutoTimeout: learned (timeout: auto)
	Grace       time.Duration // SIGTERM to SIGKILL; 0: the engine's default (5s)
	Group       string        // the downstream it calls; "" for none
	Queue       string        // "": the default queue
	Tenant      string        // whose work it is, for per-tenant limits; "" for none
	Priority    int           // higher runs first
	PoisonAfter int           // identical failures in a row that make it poison; 0: the policy's
}

// Load reads and parses the task file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("taskfile: %w", err)
	}
	return Parse(path, data)
}

// Parse parses and validates a task file; path names it in errors. It
// returns every problem it finds, as *Error values joined with errors.Join
// and sorted by line, and no File unless there is none.
func Parse(path string, data []byte) (*File, error) {
	p := &parser{
		errs:    errList{path: path, lines: countLines(data)},
		merging: make(map[*yaml.Node]bool),
		read:    make(map[*yaml.Node][]pair),
	}
	root := decodeYAML(data, &p.errs)
	if root == nil {
		return nil, p.errs.err()
	}
	f := p.file(root, path)
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// NewRun returns the run to submit to a store: one task of kind
// task.KindExec per task of the file, its Args the JSON of its Exec and its
// Policy the policy string when one is set. key is the run's idempotency
// key ("" for none). NewRun checks what a run needs of a File built in Go
// (a name, tasks with unique valid names and a command, needs without
// cycles); a File from Parse passes.
func (f *File) NewRun(key string) (task.NewRun, error) {
	if err := f.validate(); err != nil {
		return task.NewRun{}, err
	}
	r := task.NewRun{Name: f.Name, Key: key, MaxFailures: f.MaxFailures, Tasks: make([]task.NewTask, 0, len(f.Tasks))}
	for _, t := range f.Tasks {
		nt, err := t.newTask()
		if err != nil {
			return task.NewRun{}, err
		}
		r.Tasks = append(r.Tasks, nt)
	}
	return r, nil
}

// newTask is the store's task for t: the one place a task of a file
// becomes a task to run, whether a run or a schedule enqueues it.
func (t Task) newTask() (task.NewTask, error) {
	args, err := json.Marshal(t.Exec)
	if err != nil {
		return task.NewTask{}, fmt.Errorf("taskfile: task %q: encode its command: %w", t.Name, err)
	}
	nt := task.NewTask{
		Name:        t.Name,
		Kind:        task.KindExec,
		Args:        args,
		Queue:       t.Queue,
		Group:       t.Group,
		Tenant:      t.Tenant,
		Priority:    t.Priority,
		PoisonAfter: t.PoisonAfter,
		Timeout:     t.Timeout,
		Grace:       t.Grace,
		Needs:       t.Needs,
	}
	if t.PolicySet {
		nt.Policy = t.Policy.String()
	}
	return nt, nil
}

// validate checks a File the way a store needs it.
func (f *File) validate() error {
	errs := errList{path: f.Path}
	if problem := runNameProblem(f.Name); problem != "" {
		errs.add(0, "the run's name %q %s (give the run a short name on one line)", f.Name, problem)
	}
	if len(f.Tasks) == 0 {
		errs.add(0, "the file has no tasks (add at least one)")
	}
	first := make(map[string]int, len(f.Tasks))
	vs := make([]vertex, 0, len(f.Tasks))
	for _, t := range f.Tasks {
		if l, dup := first[t.Name]; dup && t.Line > 0 {
			errs.add(t.Line, "task %q is defined twice, at lines %d and %d (rename or remove one)", t.Name, l, t.Line)
		} else if dup {
			errs.add(0, "task %q is defined twice (rename or remove one)", t.Name)
		} else {
			first[t.Name] = t.Line
		}
		if !nameRE.MatchString(t.Name) {
			errs.add(t.Line, "task name %q is not valid (%s)", t.Name, nameRule)
		}
		if (len(t.Exec.Argv) == 0) == (t.Exec.Shell == "") {
			errs.add(t.Line, "task %q needs exactly one of Exec.Argv and Exec.Shell (set its command)", t.Name)
		}
		v := vertex{name: t.Name, line: t.Line}
		for _, n := range t.Needs {
			v.needs = append(v.needs, ref{name: n, line: t.Line})
		}
		vs = append(vs, v)
	}
	checkNeeds(vs, &errs)
	return errs.err()
}
