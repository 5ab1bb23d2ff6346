// Package task holds grit's domain types: task states, the records of
// tasks, attempts, runs and workers, and the sentinel errors every layer
// shares. It imports only the standard library, so every package of grit
// (and a program that reads grit's records) can import it.
package task
