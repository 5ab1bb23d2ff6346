package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/version"
)

// TestVersionOfThisBinary: a test binary has no version control
// information, and grit version says so; it prints what the build says.
func TestVersionOfThisBinary(t *testing.T) {
	t.Parallel()
	bi, _ := debug.ReadBuildInfo()
	want := version.FromBuild(bi)
	code, out, _ := grit(t, "version")
	if code != 0 || !strings.HasPrefix(out, "grit "+want.Version+"\n") {
		t.Errorf("exit %d, %q", code, out)
	}
	if want.Revision == "" && !strings.Contains(out, "revision unknown: built without version control information") {
		t.Errorf("without a revision: %q", out)
	}
	if _, flag, _ := grit(t, "--version"); flag != out {
		t.Errorf("grit --version printed %q, grit version %q", flag, out)
	}
	code, out, _ = grit(t, "version", "--json")
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Version != want.Version || got.Revision != want.Revision || got.Go == "" {
		t.Errorf("version --json: exit %d, %v: %s", code, err, out)
	}
}

// TestVersionOfABuild builds grit as a user does, in a git checkout of
// this tree (a copy, as the tree may be a worktree, which the go command
// does not stamp): grit version prints the commit and whether the tree
// was modified, and a worker records the same version.
func TestVersionOfABuild(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed: CI runs in a git clone, and this test builds grit from a commit")
		}
		t.Skip("\n*** SKIPPED: git is not installed: the version of a build from a commit is not checked ***")
	}
	src := copyTree(t, filepath.Join("..", ".."))
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=grit", "GIT_AUTHOR_EMAIL=grit@example.com", "GIT_COMMITTER_NAME=grit", "GIT_COMMITTER_EMAIL=grit@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("git", "init", "-q")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "a build of grit")
	rev := run("git", "rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "grit")

	for _, modified := range []bool{false, true} {
		if modified {
			os.WriteFile(filepath.Join(src, "README.md"), []byte("changed\n"), 0o644)
		}
		run("go", "build", "-o", bin, "./cmd/grit")
		out := run(bin, "version", "--json")
		var got version.Info
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("version --json: %v: %s", err, out)
		}
		if got.Revision != rev || got.Modified != modified || got.CommitTime == nil || !strings.Contains(got.Version, rev[:12]) ||
			strings.HasSuffix(got.Version, "+dirty") != modified {
			t.Errorf("modified %v: %+v, want revision %s", modified, got, rev)
		}
		text := run(bin, "version")
		if !strings.HasPrefix(text, "grit "+got.Version+"\nrevision "+rev) || strings.Contains(text, ", modified,") != modified {
			t.Errorf("grit version:\n%s", text)
		}
		if flag := run(bin, "--version"); flag != text {
			t.Errorf("grit --version:\n%s\nwant what grit version prints", flag)
		}
		if modified {
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "grit.db")
			run(bin, "run", "-q", "--store", dsn, example("flaky.yaml"))
			var st statusReport
			json.Unmarshal([]byte(run(bin, "status", "--json", "--store", dsn)), &st)
			if len(st.Workers) != 1 || st.Workers[0].Version != got.Version {
				t.Errorf("workers %+v, want one that recorded %s", st.Workers, got.Version)
			}
		}
	}
}

// copyTree copies the files of a directory tree, leaving out .git, into a
// directory of the test's own.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
