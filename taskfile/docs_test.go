package taskfile_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/taskfile"
)

// TestDocs keeps docs/taskfile.md honest: its complete example parses as
// it says, and its error example gives the errors it shows.
func TestDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/taskfile.md")
	if err != nil {
		t.Skipf("no docs: %v", err)
	}
	blocks := regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var complete, scheduled, broken, errs string
	for i, b := range blocks {
		switch {
		case strings.Contains(b[2], "x-eu: &eu"):
			complete = b[2]
		case strings.Contains(b[2], "schedules:") && strings.Contains(b[2], "name: reports"):
			scheduled = b[2]
		case strings.Contains(b[2], "timout: 30s") && i+1 < len(blocks):
			broken, errs = b[2], blocks[i+1][2]
		}
	}
	if complete == "" || scheduled == "" || broken == "" {
		t.Fatal("docs/taskfile.md lost its complete example, its schedules example or its error example")
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

	checkDocsSchedules(t, scheduled)

	_, err = taskfile.Parse("settle.yaml", []byte(broken))
	if err == nil || err.Error() != strings.TrimSpace(errs) {
		t.Errorf("the error example gives:\n%v\nthe docs show:\n%s", err, errs)
	}
}

// checkDocsSchedules checks the schedules example of docs/taskfile.md.
func checkDocsSchedules(t *testing.T, example string) {
	t.Helper()
	f, err := taskfile.Parse("reports.yaml", []byte(example))
	if err != nil {
		t.Fatalf("the schedules example: %v", err)
	}
	if len(f.Schedules) != 2 {
		t.Fatalf("the schedules example has %d schedules, want 2", len(f.Schedules))
	}
	nightly, ping := f.Schedules[0], f.Schedules[1]
	if nightly.Name != "nightly-report" || nightly.Zone != "Europe/Paris" || nightly.Task.Policy != "3 1s 30s" || nightly.Task.Queue != "reports" {
		t.Errorf("nightly-report = %+v", nightly)
	}
	if ping.Name != "health/ping" || ping.Every != 30*time.Second || ping.Task.Policy != "never" {
		t.Errorf("health/ping = %+v", ping)
	}
}
