package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/gen"
)

func newGenCmd(e *env) *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "gen [DIR ...]",
		Short: "write each package's " + gen.FileName + " from its handlers' //grit:retry and //grit:handler directives",
		Long: `Reads the Go packages in the directories named (default ".", the current
package, as //go:generate grit gen runs it; DIR/... for DIR and every
package below it) and writes, in each whose functions carry directives, a
file ` + gen.FileName + ` with RegisterHandlers(c *grit.Client) error, which
registers those handlers with their retry policies and catch kinds:

    // ChargeCard charges a card; when its retries run out, refund runs.
    //
    //grit:retry 5 1s 1m catch refund
    func ChargeCard(ctx context.Context, c Charge) error

A handler's kind is its function's name in snake case (ChargeCard is
charge_card), unless //grit:handler KIND names another. A directive that
does not parse, on a function of the wrong shape, or whose catch kind no
handler of the packages declares fails with file:line and the fix, and
nothing is written. --check writes nothing and fails (exit 1) when a file
is stale, for CI. See docs/directives.md.`,
		RunE: func(_ *cobra.Command, args []string) error { return e.gen(args, check) },
	}
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; exit 1 naming the generated files that are stale or missing")
	return cmd
}

func (e *env) gen(args []string, check bool) error {
	if len(args) == 0 {
		args = []string{"."}
	}
	dirs, err := genDirs(args)
	if err != nil {
		return usageErr("gen: %v", err)
	}
	files, err := gen.Generate(uniqueDirs(dirs))
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	var stale []string
	for _, f := range files {
		old, err := os.ReadFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		exists := err == nil
		if f.Content == nil && !exists || bytes.Equal(old, f.Content) && exists {
			continue
		}
		stale = append(stale, f.Path)
		if check {
			continue
		}
		if f.Content == nil {
			err = os.Remove(f.Path)
		} else {
			err = os.WriteFile(f.Path, f.Content, 0o644)
		}
		if err != nil {
			return err
		}
	}
	if check && len(stale) > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("gen: stale: %s (run grit gen)", strings.Join(stale, ", "))}
	}
	return nil
}

// genDirs expands DIR/... into DIR and every directory below it holding
// Go files, but testdata, vendor and those whose names start with . or _
// (as the go command does).
func genDirs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		root, ok := strings.CutSuffix(filepath.ToSlash(a), "/...")
		if !ok {
			out = append(out, a)
			continue
		}
		root = filepath.FromSlash(root)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if hasGoFiles(path) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hasGoFiles(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}

// uniqueDirs drops the directories named twice (". ./..." names "." twice),
// which would otherwise declare each of their kinds twice.
func uniqueDirs(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if c := filepath.Clean(d); !seen[c] {
			seen[c] = true
			out = append(out, d)
		}
	}
	return out
}
