// Package proc runs one attempt of a process task so that no process of the
// task outlives its attempt, nor, as far as Linux allows, its worker.
//
// [Run] starts the command, waits for it, and returns a [Result] with its exit
// status and the tails of its output. A non-zero exit is a Result, never an
// error: Run fails only when the command could not be started.
//
// # Guarantees
//
//   - No shell unless asked: [Spec.Argv] is executed directly; only
//     [Spec.Shell] goes through "/bin/sh -c".
//   - The command leads its own process group (pgid = pid), so a signal sent
//     to the group reaches every descendant that stayed in it.
//   - When the context ends (deadline or cancellation) the group gets SIGTERM
//     (and SIGCONT, so a stopped process can act on it); if the leader has not
//     exited after [Spec.Grace], the group gets SIGKILL. A context whose
//     cause matches [ErrKill] (a lost lease) gets SIGKILL at once.
//   - Whenever the leader exits, for any reason, the whole group gets SIGKILL
//     before Run returns: a task that leaves `sleep 1000 &` behind leaves
//     nothing behind. The leader's exit ends the attempt, so group members
//     still running then get no grace of their own.
//   - No pid reuse race: the leader is not reaped until the group has been
//     killed (Run waits with waitid(WNOWAIT)), so the pid and pgid Run signals
//     always name the task's processes, never recycled ones.
//   - The leader dies with its worker: it is started with Pdeathsig = SIGKILL.
//     Linux sends that signal when the parent *thread* exits, not the parent
//     process (go.dev/issue/27505), and the Go runtime may retire a thread at
//     any time (any goroutine that exits while locked with
//     runtime.LockOSThread takes its thread with it). So Run starts the
//     command from a goroutine locked to its thread and keeps it locked,
//     parked in waitid, until the leader has exited: no other goroutine can
//     run on, and so retire, that thread. The price is one OS thread per
//     running attempt.
//   - Output never wedges Run: once the group is dead, descendants that
//     escaped it (see below) may keep stdout or stderr open; Run stops reading
//     after a short drain delay (one second) instead of waiting for them.
//   - [Result.Stdout] and [Result.Stderr] keep the last [Spec.TailBytes]
//     bytes of each stream, cut at a line boundary when truncated. The live
//     copies ([Spec.Stdout], [Spec.Stderr]) are never written concurrently; a
//     live writer that fails is dropped and never fails the task.
//
// # Limits
//
//   - A descendant that leaves the group (setsid, setpgid: daemons,
//     `setsid cmd &`) escapes every group signal. Only a cgroup can contain
//     those (cgroup.kill, a systemd scope). PR_SET_CHILD_SUBREAPER is not used:
//     it is process-wide and would change how the host program reaps orphans,
//     which a library must not do.
//   - Pdeathsig covers the leader only: the kernel clears it on fork, so if
//     the worker is killed with SIGKILL, descendants of a shell task that are
//     still running survive the leader (they lose their output pipes, and
//     usually die of SIGPIPE when they next write). A worker that shuts
//     down by cancelling its attempts' contexts kills their whole groups;
//     for one that is killed, [KillOrphans] lets another process on the
//     host end what it left, by the tag in their environment.
//   - Argv[0] is looked up in the worker's PATH, not in a PATH set by
//     [Spec.Env].
//   - Linux only; elsewhere Run returns an error matching
//     errors.ErrUnsupported.
package proc
