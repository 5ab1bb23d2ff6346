package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/gen"
)

const genSrc = `package pay

import "context"

//grit:retry 3 1s 1m catch refund
func ChargeCard(ctx context.Context, amount int) error { return nil }

//grit:handler refund
func Refund(ctx context.Context, c map[string]any) error { return nil }
`

// TestGenWritesChecksAndRemoves: grit gen writes the file, --check passes
// on it and fails once the source changes, and a package left without
// directives loses its file.
func TestGenWritesChecksAndRemoves(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "pay")
	os.Mkdir(dir, 0o755)
	src := filepath.Join(dir, "pay.go")
	os.WriteFile(src, []byte(genSrc), 0o644)
	out := filepath.Join(dir, gen.FileName)

	if code, _, stderr := grit(t, "gen", "--check", root+"/..."); code != exitFailed || !strings.Contains(stderr, "stale: "+out) {
		t.Errorf("check before gen: exit %d, %q", code, stderr)
	}
	if code, _, stderr := grit(t, "gen", root+"/..."); code != 0 {
		t.Fatalf("gen: exit %d, %q", code, stderr)
	}
	body, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(body), `grit.Handle(c, "charge_card", ChargeCard, grit.HandlerConfig{Policy: "3 1s 1m", Catch: "refund"})`) {
		t.Fatalf("generated %s (%v)", body, err)
	}
	if code, _, stderr := grit(t, "gen", "--check", dir, root+"/..."); code != 0 {
		t.Errorf("check after gen, the package named twice: exit %d, %q", code, stderr)
	}
	os.WriteFile(src, []byte(strings.Replace(genSrc, "3 1s 1m", "4 1s 1m", 1)), 0o644)
	if code, _, _ := grit(t, "gen", "--check", dir); code != exitFailed {
		t.Errorf("check after an edit: exit %d, want %d", code, exitFailed)
	}
	os.WriteFile(src, []byte("package pay\n"), 0o644)
	if code, _, stderr := grit(t, "gen", dir); code != 0 {
		t.Fatalf("gen without directives: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the generated file of a package without directives is still there (%v)", err)
	}
}

// TestGenRefusesABadDirective: exit 2, file:line and the fix, nothing
// written.
func TestGenRefusesABadDirective(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pay.go"), []byte(strings.Replace(genSrc, "3 1s 1m", "3 1x", 1)), 0o644)
	code, _, stderr := grit(t, "gen", dir)
	want := filepath.Join(dir, "pay.go") + `:5: //grit:retry: retry policy "3 1x": "1x" is not a duration`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, want)
	}
	if _, err := os.Stat(filepath.Join(dir, gen.FileName)); !os.IsNotExist(err) {
		t.Errorf("a file was written (%v)", err)
	}
}
