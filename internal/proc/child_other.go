//go:build !linux

package proc

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Child is only implemented on Linux: it relies on Pdeathsig and waitid.
type Child struct{ Pid int }

// StartChild is only implemented on Linux.
func StartChild(cmd *exec.Cmd, tail int, live io.Writer) (*Child, error) {
	return nil, fmt.Errorf("proc: isolated children need Linux: %w", errors.ErrUnsupported)
}

func (c *Child) Exited() <-chan struct{}         { return nil }
func (c *Child) Stop(grace time.Duration) bool   { return false }
func (c *Child) Kill()                           {}
func (c *Child) Wait() (code int, signal string) { return -1, "" }
func (c *Child) Stderr() []byte                  { return nil }
func (c *Child) RSS() (int64, error)             { return 0, errors.ErrUnsupported }
