package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/gritbench"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestWorkerMemoryIsFlat builds grit as users run it (without the race
// detector, whose shadow memory would be measured too) and has grit bench
// run one worker process through 100,000 tasks on PostgreSQL: its resident
// memory stays under 100 MiB and does not grow from the first tenth of the
// run to the last. grit bench --memory-tasks 1000000 is the full figure
// (docs/bench.md).
func TestWorkerMemoryIsFlat(t *testing.T) {
	t.Parallel()
	pgtest.Admin(t)
	bin := filepath.Join(t.TempDir(), "grit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/grit")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "bench", "--json", "--store", pgtest.DSN(), "--tasks", "100", "--workers", "1",
		"--latency", "5", "--retries", "5", "--procs", "1", "--takeover=false", "--memory-tasks", "100000", "--isolated", "0")
	done := make(chan struct{})
	timer := time.AfterFunc(5*time.Minute, func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
		}
	})
	out, err := cmd.Output()
	close(done)
	timer.Stop()
	if err != nil {
		t.Fatalf("grit bench: %v\n%s", err, out)
	}
	var r gritbench.Result
	if err := json.Unmarshal(out, &r); err != nil || len(r.MemoryMiB) != 10 {
		t.Fatalf("result %s: %v", out, err)
	}
	first, last := r.MemoryMiB[0], r.MemoryMiB[9]
	if r.MemoryPeakMiB > 100 || last > first+10 {
		t.Errorf("worker memory over 100,000 tasks: %.1f MiB after a tenth, %.1f at the end, peak %.1f: want under 100 and flat", first, last, r.MemoryPeakMiB)
	}
	t.Logf("RSS by tenths (MiB): %v, peak %.1f", r.MemoryMiB, r.MemoryPeakMiB)
}
