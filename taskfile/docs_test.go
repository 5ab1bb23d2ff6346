package taskfile_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/grit-run/grit/taskfile"
)

// TestDocs keeps docs/taskfile.md honest: its complete example parses as
// it says, and its error example gives the errors it shows.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/taskfile.md")
	if err != nil {
		t.Skipf("no docs: %v", err)
	}
	blocks := regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var complete, broken, errs string
	for i, b := range blocks {
		switch {
		case strings.Contains(b[2], "x-eu: &eu"):
			complete = b[2]
		case strings.Contains(b[2], "timout: 30s") && i+1 < len(blocks):
			broken, errs = b[2], blocks[i+1][2]
		}
	}
	if complete == "" || broken == "" {
		t.Fatal("docs/taskfile.md lost its complete example or its error example")
	}

	f, err := taskfile.Parse("settlement.yaml", []byte(complete))
	if err != nil {
		t.Fatalf("the complete example: %v", err)
	}
	settle := f.Tasks[2]
	if want := []string{"CURRENCY=EUR", "REGION=us"}; !reflect.DeepEqual(settle.Exec.Env, want) {
		t.Errorf("settle's env = %v, want %v", settle.Exec.Env, want)
	}
	run, err := f.NewRun("k")
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Tasks[2].Policy; got != "4 1s 30s max_elapsed=5m" {
		t.Errorf("settle's policy = %q", got)
	}

	_, err = taskfile.Parse("settle.yaml", []byte(broken))
	if err == nil || err.Error() != strings.TrimSpace(errs) {
		t.Errorf("the error example gives:\n%v\nthe docs show:\n%s", err, errs)
	}
}
