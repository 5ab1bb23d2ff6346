//go:build !linux

package pgtest

import "os/exec"

// runAs leaves cmd as it is: only Linux test machines run as root.
func runAs(*exec.Cmd, int, int) {}
