//go:build !linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// Run is only implemented on Linux: it relies on Pdeathsig and waitid.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.validate(); err != nil {
		return Result{}, err
	}
	return Result{}, fmt.Errorf("proc: start %s: process tasks need Linux: %w", s.label(), errors.ErrUnsupported)
}

// KillTagged is only implemented on Linux.
func KillTagged(key, value string) (int, error) { return 0, errors.ErrUnsupported }

// KillOrphans is only implemented on Linux.
func KillOrphans(key string) (int, error) { return 0, errors.ErrUnsupported }

// Alive reports whether pid names a live process.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
