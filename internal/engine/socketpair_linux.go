package engine

import "syscall"

// socketPair is a connected pair of Unix stream sockets, closed on exec,
// for a worker and its isolated handler's child.
func socketPair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
