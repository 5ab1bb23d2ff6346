package pgtest

import (
	"os/exec"
	"syscall"
)

// runAs runs cmd as uid and gid, and ends it if the test binary dies.
func runAs(cmd *exec.Cmd, uid, gid int) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		Pdeathsig:  syscall.SIGKILL,
	}
}
