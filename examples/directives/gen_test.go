package directives_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/grit-run/grit/internal/gen"
)

// TestGeneratedFileIsFresh regenerates the handlers' file in memory: it
// must be the one committed, or a directive changed without go generate.
func TestGeneratedFileIsFresh(t *testing.T) {
	t.Parallel()
	files, err := gen.Generate([]string{"."})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(gen.FileName)
	if err != nil {
		t.Fatalf("%v: run go generate in examples/directives", err)
	}
	if !bytes.Equal(files[0].Content, committed) {
		t.Errorf("%s is stale: run go generate in examples/directives (grit gen); it should be:\n%s", gen.FileName, files[0].Content)
	}
}
