package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

func enqueueN(t testing.TB, s store.Store, n int) {
	t.Helper()
	for start := 0; start < n; start += 1000 {
		ts := make([]task.NewTask, min(1000, n-start))
		for i := range ts {
			ts[i] = task.NewTask{Kind: "k"}
		}
		if _, err := s.Enqueue(context.Background(), ts); err != nil {
			t.Fatal(err)
		}
	}
}

// claimAll claims with limit until nothing is left, sending each id to ids.
func claimAll(ctx context.Context, s store.Store, worker string, ids func(int64)) error {
	for {
		got, err := s.Claim(ctx, store.ClaimRequest{Worker: worker, Limit: 7, Lease: time.Hour})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return nil
		}
		for _, c := range got {
			ids(c.ID)
		}
	}
}

func TestTwoStoresOnOneFileNeverShareATask(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	a, b := openPath(t, path), openPath(t, path)
	const n = 500
	enqueueN(t, a, n)
	var mu sync.Mutex
	counts := map[int64]int{}
	var wg sync.WaitGroup
	for i, s := range []store.Store{a, b, a, b} {
		wg.Go(func() {
			err := claimAll(t.Context(), s, fmt.Sprint("w", i), func(id int64) {
				mu.Lock()
				counts[id]++
				mu.Unlock()
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	checkOnce(t, counts, n)
}

func checkOnce(t *testing.T, counts map[int64]int, n int) {
	t.Helper()
	if len(counts) != n {
		t.Errorf("%d tasks claimed, want %d", len(counts), n)
	}
	for id, c := range counts {
		if c != 1 {
			t.Errorf("task %d claimed %d times", id, c)
		}
	}
}

func openPath(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestHelperClaimer is not a test: run by TestTwoProcessesNeverShareATask
// in a child process, it claims every task it can and prints their ids.
func TestHelperClaimer(t *testing.T) {
	path := os.Getenv("GRIT_TEST_CLAIMER_DB")
	if path == "" {
		t.Skip("run as a child process only")
	}
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	err = claimAll(t.Context(), s, fmt.Sprint("pid", os.Getpid()), func(id int64) { fmt.Fprintln(out, "claimed", id) })
	if err != nil {
		t.Fatal(err)
	}
}

func TestTwoProcessesNeverShareATask(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grit.db")
	s := openPath(t, path)
	const n = 1000
	enqueueN(t, s, n)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var cmds []*exec.Cmd
	var outs []*bufio.Scanner
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperClaimer$", "-test.v")
		cmd.Env = append(os.Environ(), "GRIT_TEST_CLAIMER_DB="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, bufio.NewScanner(stdout))
	}
	counts := map[int64]int{}
	for _, sc := range outs {
		for sc.Scan() {
			var id int64
			if _, err := fmt.Sscanf(sc.Text(), "claimed %d", &id); err == nil {
				counts[id]++
			}
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("claimer process: %v", err)
		}
	}
	checkOnce(t, counts, n)
}
