package taskfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grit-run/grit/internal/suggest"
)

// vertex is a task as the needs check sees it.
type vertex struct {
	name  string
	line  int
	needs []ref
}

// ref is one entry of a needs list, with its line.
type ref struct {
	name string
	line int
}

// edge says that a task needs the task at index to, as written on line.
type edge struct {
	to, line int
}

// checkNeeds reports needs that name no task of the file or the task
// itself, and cycles. It returns each task's needs, each named once, in
// the order written. Names must be unique (the first of a name is used).
func checkNeeds(vs []vertex, errs *errList) [][]string {
	index := make(map[string]int, len(vs))
	for i, v := range vs {
		if _, ok := index[v.name]; !ok {
			index[v.name] = i
		}
	}
	needs := make([][]string, len(vs))
	edges := make([][]edge, len(vs))
	for i, v := range vs {
		seen := make(map[string]bool, len(v.needs))
		for _, r := range v.needs {
			j, ok := index[r.name]
			switch {
			case r.name == v.name:
				errs.add(r.line, "task %q needs itself (remove %q from its needs)", v.name, r.name)
			case !ok:
				errs.add(r.line, "task %q needs %q, which is not a task of this file (%s)", v.name, r.name, tasksHint(vs, v.name, r.name))
			case seen[r.name]:
			default:
				seen[r.name] = true
				needs[i] = append(needs[i], r.name)
				edges[i] = append(edges[i], edge{to: j, line: r.line})
			}
		}
	}
	for _, c := range cycles(edges) {
		names := make([]string, 0, len(c)+1)
		for _, i := range c {
			names = append(names, vs[i].name)
		}
		names = append(names, vs[c[0]].name)
		if len(names) > maxCycleNames {
			names = slices.Concat(names[:maxCycleNames-3], []string{"…"}, names[len(names)-2:])
		}
		line := edges[c[0]][slices.IndexFunc(edges[c[0]], func(e edge) bool { return e.to == c[1] })].line
		errs.add(line, "cycle: %s (each task needs the next, so none can start: remove one of these needs)", strings.Join(names, " -> "))
	}
	return needs
}

// maxCycleNames bounds the names a cycle error shows.
const maxCycleNames = 12

// tasksHint suggests the task a bad need meant, and lists the others.
func tasksHint(vs []vertex, self, bad string) string {
	var others []string
	for _, v := range vs {
		if v.name != self && !slices.Contains(others, v.name) {
			others = append(others, v.name)
		}
	}
	if len(others) == 0 {
		return "it is the only task"
	}
	list := others
	if len(list) > 10 {
		list = append(list[:10:10], "…")
	}
	hint := "tasks: " + strings.Join(list, ", ")
	if s, ok := suggest.Closest(bad, others); ok {
		hint = fmt.Sprintf("did you mean %q? %s", s, hint)
	}
	return hint
}

// cycles returns one cycle in each strongly connected component of more
// than one task: the shortest cycle through the component's first task, as
// task indexes, starting there (the start is not repeated at the end).
func cycles(edges [][]edge) [][]int {
	var out [][]int
	for _, comp := range components(edges) {
		if len(comp) < 2 {
			continue
		}
		out = append(out, shortestCycle(edges, comp))
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// shortestCycle finds, by a breadth-first search within comp, the shortest
// path from comp's first task back to it.
func shortestCycle(edges [][]edge, comp []int) []int {
	start := slices.Min(comp)
	in := make(map[int]bool, len(comp))
	for _, i := range comp {
		in[i] = true
	}
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range edges[u] {
			if e.to == start {
				return pathTo(prev, start, u)
			}
			if _, seen := prev[e.to]; in[e.to] && !seen {
				prev[e.to] = u
				queue = append(queue, e.to)
			}
		}
	}
	panic("taskfile: a strongly connected component without a cycle")
}

// pathTo returns the path from start to end through prev.
func pathTo(prev map[int]int, start, end int) []int {
	path := []int{end}
	for end != start {
		end = prev[end]
		path = append(path, end)
	}
	slices.Reverse(path)
	return path
}

// components returns the strongly connected components of the graph, by
// Tarjan's algorithm, without recursion so that a long chain of needs
// cannot exhaust the stack.
func components(edges [][]edge) [][]int {
	t := tarjan{edges: edges, index: make([]int, len(edges)), low: make([]int, len(edges)), onStack: make([]bool, len(edges))}
	for i := range t.index {
		t.index[i] = -1
	}
	for root := range edges {
		if t.index[root] < 0 {
			t.visit(root)
		}
	}
	return t.comps
}

// tarjan is the state of Tarjan's algorithm.
type tarjan struct {
	edges      [][]edge
	index, low []int // -1: not visited yet
	onStack    []bool
	stack      []int
	next       int
	comps      [][]int
}

func (t *tarjan) push(v int) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
}

// visit runs the depth-first search from root, with an explicit call stack
// of (vertex, next edge to follow).
func (t *tarjan) visit(root int) {
	type frame struct{ v, e int }
	call := []frame{{root, 0}}
	t.push(root)
	for len(call) > 0 {
		f := &call[len(call)-1]
		if f.e < len(t.edges[f.v]) {
			w := t.edges[f.v][f.e].to
			f.e++
			if t.index[w] < 0 {
				t.push(w)
				call = append(call, frame{w, 0})
			} else if t.onStack[w] {
				t.low[f.v] = min(t.low[f.v], t.index[w])
			}
			continue
		}
		v := f.v
		call = call[:len(call)-1]
		if len(call) > 0 {
			u := call[len(call)-1].v
			t.low[u] = min(t.low[u], t.low[v])
		}
		if t.low[v] == t.index[v] {
			t.popComponent(v)
		}
	}
}

// popComponent pops the component whose root is v off the stack.
func (t *tarjan) popComponent(v int) {
	var comp []int
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.onStack[w] = false
		comp = append(comp, w)
		if w == v {
			break
		}
	}
	t.comps = append(t.comps, comp)
}
