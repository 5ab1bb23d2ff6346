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
