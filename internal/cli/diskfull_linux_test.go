package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFullDiskAtStart: a store whose disk is full says so, with the exit
// code of a store that is unavailable (3), not that of a bad file; it
// runs on a small tmpfs, which needs root to mount.
func TestFullDiskAtStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("TestFullDiskAtStart needs root, to mount a small tmpfs: not run")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	for _, args := range [][]string{{"submit", "--store", dsn, example("flaky.yaml")}, {"migrate", "--store", dsn}} {
		code, out, errOut := grit(t, args...)
		if code != exitUnavailable || !strings.Contains(errOut, "the disk is full") || strings.Contains(errOut, "disk I/O error") && !strings.Contains(errOut, "(SQLite: disk I/O error") {
			t.Errorf("grit %s on a full disk: exit %d, stdout %q, stderr %q; want exit %d saying the disk is full", args[0], code, out, errOut, exitUnavailable)
		}
	}
}

// TestEnqueueOnFullDisk: grit server on a store whose disk fills answers
// an enqueue UNAVAILABLE saying the disk is full (exit 3, which clients
// retry), not INTERNAL; once space is freed the same call succeeds.
func TestEnqueueOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("TestEnqueueOnFullDisk needs root, to mount a small tmpfs: not run")
	}
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	addr, stop := startServer(t, "sqlite:"+filepath.Join(dir, "grit.db"))
	defer stop()
	enq := func() (int, string, string) {
		return grit(t, "enqueue", "--server", addr, "--kind", "k", "--args", `{"pad":"`+strings.Repeat("x", 4000)+`"}`)
	}
	if code, out, errOut := enq(); code != 0 {
		t.Fatalf("enqueue with room: exit %d: %s %s", code, out, errOut)
	}
	filler := filepath.Join(dir, "filler")
	fillDisk(t, filler)
	code, out, errOut := enq()
	for i := 0; code == 0 && i < 1000; i++ { // pages free in the database take a few tasks more
		code, out, errOut = enq()
	}
	if code != exitUnavailable || !strings.Contains(errOut, "disk is full") || strings.Contains(errOut, "rpc error") {
		t.Fatalf("enqueue on a full disk: exit %d, stdout %q, stderr %q; want exit %d saying the disk is full, in no words of the transport", code, out, errOut, exitUnavailable)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := enq(); code != 0 {
		t.Errorf("enqueue once space is freed: exit %d: %s %s", code, out, errOut)
	}
}

// fillDisk writes path until its file system has no room left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			return
		}
	}
}
