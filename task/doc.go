// Package task holds the types a user of grit writes and reads: what to
// insert (NewTask, NewRun, Event), what comes back (Task, Enqueued, Run,
// Attempt, Step, Worker), how to select (Filter, RunFilter), what an
// operator does (Action), task states, and the sentinel errors every layer
// shares. It imports only the standard library, so every package of grit
// (and a program that reads grit's records) can import it.
package task
