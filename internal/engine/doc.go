// Package engine works tasks: a claim loop that claims due tasks in
// batches, a bounded pool of executors, completions batched into one store
// transaction, heartbeats that renew every lease at once, and a rescuer that
// takes over the tasks of dead workers. It claims through internal/gate
// (breakers, budgets, limits, pressure, rescue), as the API server does for
// remote workers; every decision after a failed attempt is taken by the
// task's retry.Policy (internal/decide).
//
// The engine never trusts a handler to end on time: a Go handler that
// ignores its context has its slot freed after a grace period and is
// reported as stuck, and a process task is killed by internal/proc
// (SIGTERM to its process group, a grace period, SIGKILL).
package engine
