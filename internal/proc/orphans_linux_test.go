package proc

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

func TestKillTaggedKillsOnlyTaggedProcesses(t *testing.T) {
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
