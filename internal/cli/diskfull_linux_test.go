package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
