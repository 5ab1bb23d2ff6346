package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// KillTagged sends SIGKILL to every process whose initial environment holds
// the entry key=value, and returns how many it signalled. A worker tags the
// processes it starts (GRIT_WORKER_ID=…), so when it dies with SIGKILL, the
// worker that takes over its tasks on the same host can end the
// grandchildren that Pdeathsig does not reach. Processes whose environment
// cannot be read (another user's) are skipped.
func KillTagged(key, value string) (int, error) {
	if key == "" {
		return 0, errors.New("proc: kill tagged: empty key")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	tag := []byte(key + "=" + value)
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if tagged(pid, tag) && syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n, nil
}

// tagged reports whether the environment of pid holds the entry tag.
func tagged(pid int, tag []byte) bool {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	for _, entry := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(entry, tag) {
			return true
		}
	}
	return false
}

// KillOrphans sends SIGKILL to every process of this pid namespace whose
// initial environment holds key=PID where PID names no live process (it
// is gone, or a zombie), and returns how many it signalled. A worker tags
// the processes it starts with its own pid (GRIT_WORKER_PID=…), which
// their descendants inherit; once the worker is gone they are orphans, and
// any process on the host can end them without asking the store. A
// process whose tagged pid lives is never touched, so a sweep cannot kill
// a live worker's processes; a dead worker's pid taken by a new process
// hides its orphans until that process ends. Processes whose environment
// or namespace cannot be read (another user's) are skipped, and so are
// those of other pid namespaces, where the pid names another process.
func KillOrphans(key string) (int, error) {
	if key == "" {
		return 0, errors.New("proc: kill orphans: empty key")
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	prefix := []byte(key + "=")
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		owner, ok := tagValue(pid, prefix)
		if !ok || owner == self || Alive(owner) {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); err != nil || l != ns {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n, nil
}

// tagValue returns the pid in pid's environment entry that starts with
// prefix.
func tagValue(pid int, prefix []byte) (int, bool) {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return 0, false
	}
	for _, entry := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			owner, err := strconv.Atoi(string(v))
			return owner, err == nil && owner > 0
		}
	}
	return 0, false
}

// Alive reports whether pid names a process that runs: one that exists
// and is not a zombie (a SIGKILLed worker whose parent has not reaped it
// yet is dead).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name, in parentheses that the name
	// itself may contain.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}
