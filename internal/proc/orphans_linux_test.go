package proc

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func TestKillTaggedKillsOnlyTaggedProcesses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := func(env string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "sleep", "1000")
		cmd.Env = append(cmd.Environ(), env)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	tagged := start("GRIT_WORKER_ID=w-dead")
	other := start("GRIT_WORKER_ID=w-alive")
	prefix := start("GRIT_WORKER_ID=w-dead-not")
	n, err := KillTagged("GRIT_WORKER_ID", "w-dead")
	if err != nil || n != 1 {
		t.Fatalf("KillTagged = %d, %v; want 1", n, err)
	}
	if err := tagged.Wait(); err == nil {
		t.Error("the tagged process exited cleanly; it should have been killed")
	}
	for _, c := range []*exec.Cmd{other, prefix} {
		if c.ProcessState != nil {
			t.Errorf("untagged process %d was killed", c.Process.Pid)
		}
	}
	if _, err := KillTagged("", "x"); err == nil {
		t.Error("an empty key was accepted")
	}
}

// TestKillOrphansKillsOnlyTheProcessesOfGoneWorkers: a process tagged with
// the pid of a worker that is gone is killed; one tagged with a live pid,
// or with this process's own, is left alone.
func TestKillOrphansKillsOnlyTheProcessesOfGoneWorkers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	start := func(env string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "sleep", "1000")
		cmd.Env = append(cmd.Environ(), env)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	live := start("OTHER=1")
	orphan := start("GRIT_TEST_ORPHAN_PID=" + strconv.Itoa(gone.Process.Pid))
	kept := []*exec.Cmd{
		start("GRIT_TEST_ORPHAN_PID=" + strconv.Itoa(live.Process.Pid)),
		start("GRIT_TEST_ORPHAN_PID=" + strconv.Itoa(os.Getpid())),
		start("GRIT_TEST_ORPHAN_PID=x"),
	}
	n, err := KillOrphans("GRIT_TEST_ORPHAN_PID")
	if err != nil || n != 1 {
		t.Fatalf("KillOrphans = %d, %v; want 1", n, err)
	}
	if err := orphan.Wait(); err == nil {
		t.Error("the orphan exited cleanly; it should have been killed")
	}
	for _, c := range append(kept, live) {
		if !Alive(c.Process.Pid) {
			t.Errorf("process %d, whose worker lives, was killed", c.Process.Pid)
		}
	}
	if _, err := KillOrphans(""); err == nil {
		t.Error("an empty key was accepted")
	}
}

func TestAliveIsFalseForAZombie(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExited(cmd.Process.Pid); err != nil { // exited, not reaped
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Error("a zombie is alive")
	}
	cmd.Wait()
	if Alive(cmd.Process.Pid) || Alive(0) {
		t.Error("a reaped process is alive")
	}
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
}
