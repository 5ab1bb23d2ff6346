package version_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/version"
)

// releaseTargets are the targets TestRelease builds: linux/amd64, and
// this machine's if it is another; all of scripts/release's with
// GRIT_TEST_RELEASE_ALL=1. Each target's first build, its build cache
// cold, takes minutes on a small machine (the SQLite driver is a large
// package), too long for every run of the suite; once warm, all four take
// about 20 seconds.
func releaseTargets() []string {
	if os.Getenv("GRIT_TEST_RELEASE_ALL") == "1" {
		return []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}
	}
	ts := []string{"linux/amd64"}
	if host := runtime.GOOS + "/" + runtime.GOARCH; host != ts[0] {
		ts = append(ts, host)
	}
	return ts
}

// TestRelease runs scripts/release into a directory of its own: every
// binary is static, SHA256SUMS holds their sums, and the binary for this
// machine says, in grit version --json, the commit the checkout is at and
// whether its tree has changes.
func TestRelease(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	rev := gitOut(t, root, "rev-parse", "HEAD")
	modified := gitOut(t, root, "status", "--porcelain") != ""
	dir := t.TempDir()
	targets := releaseTargets()
	release(t, root, dir, nil, targets...)

	sums := readSums(t, filepath.Join(dir, "SHA256SUMS"))
	for _, target := range targets {
		name := "grit-" + strings.ReplaceAll(target, "/", "-")
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); sums[name] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA256SUMS says %q, the file's sum is %x", name, sums[name], sum)
		}
		delete(sums, name)
		if strings.HasPrefix(target, "linux/") {
			checkStatic(t, filepath.Join(dir, name))
		}
	}
	if len(sums) != 0 {
		t.Errorf("SHA256SUMS names other files: %v", sums)
	}
	got := runVersion(t, filepath.Join(dir, "grit-"+runtime.GOOS+"-"+runtime.GOARCH))
	if got.Revision != rev || got.Modified != modified || got.CommitTime == nil || !strings.Contains(got.Version, rev[:12]) ||
		strings.HasSuffix(got.Version, "+dirty") != modified {
		t.Errorf("grit version --json: %+v, want revision %s, modified %v", got, rev, modified)
	}
}

// TestReleaseOutsideACheckout: where there is no checkout (a Docker build
// without .git), scripts/release stamps what GRIT_VERSION, GRIT_REVISION,
// GRIT_MODIFIED and GRIT_COMMIT_TIME say.
func TestReleaseOutsideACheckout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const rev = "0123456789abcdef0123456789abcdef01234567"
	target := runtime.GOOS + "/" + runtime.GOARCH
	release(t, repoRoot(t), dir, []string{"GRIT_VERSION=v1.2.3", "GRIT_REVISION=" + rev, "GRIT_MODIFIED=true", "GRIT_COMMIT_TIME=2026-01-02T15:04:05Z"}, target)
	got := runVersion(t, filepath.Join(dir, "grit-"+runtime.GOOS+"-"+runtime.GOARCH))
	if got.Version != "v1.2.3+dirty" || got.Revision != rev || !got.Modified || got.CommitTime == nil ||
		!got.CommitTime.Equal(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)) {
		t.Errorf("grit version --json: %+v", got)
	}
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "release"), "-o", dir, "plan9/amd64")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "target plan9/amd64: want linux/amd64") {
		t.Errorf("an unknown target: %v: %s", err, out)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v (the release test needs a git checkout): %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// release runs scripts/release into dir, bounded.
func release(t *testing.T, root, dir string, env []string, targets ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "release"), append([]string{"-o", dir}, targets...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, out)
	}
	t.Logf("scripts/release %v: %v", targets, time.Since(start).Round(time.Millisecond))
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not SUM  NAME", sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

// checkStatic fails unless the ELF binary asks for no dynamic loader.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked", filepath.Base(path))
		}
	}
}

func runVersion(t *testing.T, bin string) version.Info {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var got version.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version --json: %v: %s", err, out)
	}
	return got
}
