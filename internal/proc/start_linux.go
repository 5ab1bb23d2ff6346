package proc

import (
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"
)

// startLocked starts cmd from a goroutine locked to its OS thread and keeps
// that thread locked until the leader has exited. Pdeathsig fires when the
// thread that forked the child exits (go.dev/issue/27505); a locked thread
// runs nothing else, so nothing can retire it while the child lives.
//
// The returned channel is closed once the leader has exited. The leader is
// left unreaped (a zombie) for cmd.Wait, so its pid cannot be reused while
// Run may still signal it.
func startLocked(cmd *exec.Cmd) (<-chan struct{}, error) {
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		// An error (ECHILD: someone else reaped the leader) also means it
		// is gone; cmd.Wait reports what it can.
		_ = waitExited(cmd.Process.Pid)
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

// waitExited blocks until the child pid has exited, without reaping it:
// waitid(P_PID, pid, WEXITED|WNOWAIT).
func waitExited(pid int) error {
	const pPID = 1
	var info [128]byte // siginfo_t, unused
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}
