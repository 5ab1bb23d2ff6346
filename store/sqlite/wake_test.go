package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// wakeBound bounds a wait for a wake that should come within milliseconds;
// it only keeps a broken build from hanging the test.
const wakeBound = 10 * time.Second

func wake(t *testing.T, ctx context.Context, s *sqlite.Store) <-chan struct{} {
	t.Helper()
	ch, err := s.Wake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestWakeOnAnotherHandleInProcess: a commit through another handle on the
// file in this process, opened through a symbolic link to its folder,
// wakes the waiter before that Enqueue returns, with no watcher to tell it
// (its interval is an hour here): the handles share the wake in process.
func TestWakeOnAnotherHandleInProcess(t *testing.T) {
	t.Parallel()
	defer sqlite.SetWatchInterval(time.Hour)()
	dir, link := t.TempDir(), filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	a, b := openPath(t, filepath.Join(dir, "grit.db")), openPath(t, "sqlite:"+filepath.Join(link, "grit.db"))
	ch := wake(t, t.Context(), a)
	if _, err := b.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("no wake waiting when the other handle's Enqueue returned")
	}
	// A write that makes nothing due wakes no one.
	if _, err := b.Claim(t.Context(), store.ClaimRequest{Worker: "w", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a claim woke the waiter")
	default:
	}
}

// TestWakeClosesWithCloseAndCtx: the channel is closed when the Store
// closes, and the watcher stops once no one waits.
func TestWakeClosesWithCloseAndCtx(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	a, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	b := openPath(t, path)
	ctx, cancel := context.WithCancel(t.Context())
	fromB := wake(t, ctx, b)
	fromA := wake(t, t.Context(), a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	wantClosed(t, fromA)
	if !sqlite.Watching(b) {
		t.Error("the watcher stopped while b still waits")
	}
	cancel()
	wantClosed(t, fromB)
	if sqlite.Watching(b) {
		t.Error("the watcher runs with no one waiting")
	}
	if _, err := a.Wake(t.Context()); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Wake on a closed store: %v, want sqlite.ErrClosed", err)
	}
}

func wantClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	deadline := time.After(wakeBound)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("the wake channel was not closed within %v", wakeBound)
		}
	}
}

// TestHelperEnqueuer is not a test: run by TestWakeFromAnotherProcess in
// a child process, it opens the store, says so, and enqueues one task when
// told to.
func TestHelperEnqueuer(t *testing.T) {
	path := os.Getenv("GRIT_TEST_ENQUEUER_DB")
	if path == "" {
		t.Skip("run as a child process only")
	}
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.Stdout.WriteString("open\n")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(t.Context(), []task.NewTask{{Kind: "from-child"}}); err != nil {
		t.Fatal(err)
	}
}

// TestWakeFromAnotherProcess: another process's Enqueue wakes a waiter,
// through the watcher. A wake counts only once the task is there to see:
// the child's open may wake the waiter before it.
func TestWakeFromAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grit.db")
	s := openPath(t, path)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperEnqueuer$")
	cmd.Env = append(os.Environ(), "GRIT_TEST_ENQUEUER_DB="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	ch := wake(t, ctx, s)
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(wakeBound)
	for seen := false; !seen; {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no wake within %v of the other process's enqueue", wakeBound)
		}
		next, ok, err := s.NextDue(ctx, store.ClaimRequest{Worker: "w"})
		if err != nil {
			t.Fatal(err)
		}
		seen = ok && !next.IsZero()
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("enqueuer process: %v", err)
	}
}

// BenchmarkDataVersion is what each tick of the watcher costs: one read
// of PRAGMA data_version on an open connection.
func BenchmarkDataVersion(b *testing.B) {
	path := filepath.Join(b.TempDir(), "grit.db")
	s, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for b.Loop() {
		var v int64
		if err := db.QueryRowContext(b.Context(), "PRAGMA data_version").Scan(&v); err != nil {
			b.Fatal(err)
		}
	}
}
