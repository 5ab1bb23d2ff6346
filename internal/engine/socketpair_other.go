//go:build !linux

package engine

import "syscall"

// socketPair is a connected pair of Unix stream sockets, closed on exec,
// for a worker and its isolated handler's child. Without SOCK_CLOEXEC
// (darwin), the fork lock keeps a process started meanwhile from
// inheriting them before they are marked.
func socketPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
