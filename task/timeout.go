package task

import "time"

// AutoTimeout, as a task's or a handler's timeout, asks the engine to
// learn the timeout from the task's successful runs: a multiple of their
// p99 within a floor and a ceiling, and a stated default until enough
// runs are on record (see the engine's AutoTimeout settings). It is a
// sentinel, stored as is: no real timeout is negative.
const AutoTimeout time.Duration = -1
