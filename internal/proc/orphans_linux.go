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
	prefix, want := []byte(key+"="), []byte(value)
	return killEach(func(pid int) bool {
		v, ok := envEntry(pid, prefix)
		return ok && bytes.Equal(v, want)
	})
}

// killEach sends SIGKILL to every other process of /proc that kill picks,
// and returns how many it signalled.
func killEach(kill func(pid int) bool) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !kill(pid) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n, nil
}

// envEntry returns the value of pid's initial environment entry that
// starts with prefix (KEY=); false when there is none or the environment
// cannot be read (another user's process).
func envEntry(pid int, prefix []byte) ([]byte, bool) {
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, false
	}
	for _, entry := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, prefix); ok {
			return v, true
		}
	}
	return nil, false
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
	prefix := []byte(key + "=")
	self := os.Getpid()
	return killEach(func(pid int) bool {
		owner, ok := tagValue(pid, prefix)
		if !ok || owner == self || Alive(owner) {
			return false
		}
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "pid"))
		return err == nil && l == ns
	})
}

// tagValue returns the pid in pid's environment entry that starts with
// prefix.
func tagValue(pid int, prefix []byte) (int, bool) {
	v, ok := envEntry(pid, prefix)
	if !ok {
		return 0, false
	}
	owner, err := strconv.Atoi(string(v))
	return owner, err == nil && owner > 0
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
