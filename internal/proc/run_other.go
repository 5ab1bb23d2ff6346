//go:build !linux

package proc

import (
	"context"
	"errors"
	"fmt"
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
