package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

// looks is a script that counts its runs in the file count of its
// directory, and exits 7 (its snooze code) until its third.
const looks = `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ "$n" -ge 3 ] || exit 7`

// TestExecSnoozes: a process task that exits with a snooze code twice and
// then 0 ends SUCCESS after one attempt and two snoozes.
func TestExecSnoozes(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	x := task.Exec{Shell: looks, Dir: t.TempDir(), SnoozeOnExit: []int{7}, Snooze: 10 * time.Millisecond}
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "never", Args: execArgs(t, x)})
	done := waitState(t, st, tk.ID, task.Success)
	if done.Attempt != 1 || done.Snoozes != 2 {
		t.Errorf("attempt %d, %d snoozes; want 1 and 2", done.Attempt, done.Snoozes)
	}
	as := attempts(t, st, tk.ID)
	if len(as) != 3 || as[0].Outcome != task.OutcomeSnoozed || as[1].Outcome != task.OutcomeSnoozed || as[2].Outcome != task.OutcomeSuccess {
		t.Fatalf("attempts %+v, want SNOOZED, SNOOZED, SUCCESS", as)
	}
	if as[0].Delay != 10*time.Millisecond || as[0].ExitCode == nil || *as[0].ExitCode != 7 {
		t.Errorf("the first look %+v, want a delay of 10ms and exit 7", as[0])
	}
}

// TestExecSnoozeFile: the delay a process writes to $GRIT_SNOOZE_FILE wins
// over the task's (here the default minute, which would outlast the
// test); the file is made anew for each attempt, and removed after it.
func TestExecSnoozeFile(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	dir := t.TempDir()
	script := `[ -f "$GRIT_SNOOZE_FILE" ] && [ ! -s "$GRIT_SNOOZE_FILE" ] || { echo "no fresh snooze file" >&2; exit 9; }
echo "$GRIT_SNOOZE_FILE" >> paths
[ "$GRIT_SNOOZES" = 1 ] && exit 0
printf ' 20ms\n' > "$GRIT_SNOOZE_FILE"; exit 7`
	x := task.Exec{Shell: script, Dir: dir, SnoozeOnExit: []int{7}}
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "never", Args: execArgs(t, x)})
	done := waitState(t, st, tk.ID, task.Success, task.Failed)
	if done.State != task.Success || done.Snoozes != 1 {
		t.Fatalf("%s after %d snoozes (%s), want SUCCESS after 1", done.State, done.Snoozes, done.LastError)
	}
	if a := attempts(t, st, tk.ID)[0]; a.Outcome != task.OutcomeSnoozed || a.Delay != 20*time.Millisecond {
		t.Errorf("the snooze %+v, want a delay of 20ms, from the file", a)
	}
	b, err := os.ReadFile(filepath.Join(dir, "paths"))
	if err != nil {
		t.Fatal(err)
	}
	paths := strings.Fields(string(b))
	if len(paths) != 2 || paths[0] == paths[1] {
		t.Fatalf("snooze files %q, want one of its own for each attempt", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Dir(p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after its attempt (%v)", p, err)
		}
	}
}

// TestExecMaxSnoozes: a process task that snoozes without end fails at
// its max_snoozes, and says so.
func TestExecMaxSnoozes(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	x := task.Exec{Shell: "exit 7", SnoozeOnExit: []int{7}, Snooze: time.Millisecond, MaxSnoozes: 2}
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "5 1ms", Args: execArgs(t, x)})
	done := waitState(t, st, tk.ID, task.Failed)
	if done.Attempt != 1 || done.Snoozes != 2 || !strings.Contains(done.LastError, "max_snoozes (2)") {
		t.Errorf("attempt %d, %d snoozes, error %q; want 1, 2 and the bound named", done.Attempt, done.Snoozes, done.LastError)
	}
}

// TestExecBadSnoozeFile: a snooze file that holds no delay fails the
// attempt, permanently, with what it held.
func TestExecBadSnoozeFile(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	x := task.Exec{Shell: `echo soon > "$GRIT_SNOOZE_FILE"; exit 7`, SnoozeOnExit: []int{7}}
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "5 1ms", Args: execArgs(t, x)})
	done := waitState(t, st, tk.ID, task.Failed)
	want := `exit status 7 asks to snooze, but its snooze file ($GRIT_SNOOZE_FILE) holds "soon", which is not a delay`
	if done.Attempt != 1 || done.Snoozes != 0 || !strings.Contains(done.LastError, want) {
		t.Errorf("attempt %d, %d snoozes, error %q; want 1, 0 and %q", done.Attempt, done.Snoozes, done.LastError, want)
	}
}

func TestParseSnooze(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		d       time.Duration
		written bool
		err     string
	}{
		{"", 0, false, ""},
		{" \n\t", 0, false, ""},
		{"30s", 30 * time.Second, true, ""},
		{"1m30s\n", 90 * time.Second, true, ""},
		{"250ms", 250 * time.Millisecond, true, ""},
		{"30", 30 * time.Second, true, ""},
		{"1.5\r\n", 1500 * time.Millisecond, true, ""},
		{"0", 0, true, ""},
		{"soon", 0, false, `holds "soon", which is not a delay (write a Go duration`},
		{"30 s", 0, false, "not a delay"},
		{"30s\n1m", 0, false, "not a delay"},
		{"-5s", 0, false, "a negative delay"},
		{"-5", 0, false, "not a delay"},
		{"1e3", 0, false, "not a delay"},
		{"99999999999999999999", 0, false, "too many seconds"},
		{"9999999999h", 0, false, "not a delay"},
		{strings.Repeat("x", 50), 0, false, `"` + strings.Repeat("x", 40) + `…"`},
	}
	for _, tt := range tests {
		d, written, err := parseSnooze([]byte(tt.in))
		switch {
		case tt.err == "" && (err != nil || d != tt.d || written != tt.written):
			t.Errorf("parseSnooze(%q) = %v, %v, %v; want %v, %v", tt.in, d, written, err, tt.d, tt.written)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseSnooze(%q) = %v, %v, %v; want an error with %q", tt.in, d, written, err, tt.err)
		}
	}
}

func FuzzParseSnooze(f *testing.F) {
	for _, s := range []string{"", "30s", "1.5", "0", "-1s", "soon", "1e3", "99999999999999999999", "2h45m0.5s", " 7 \n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, written, err := parseSnooze(b)
		switch {
		case err != nil && (written || d != 0 || !strings.Contains(err.Error(), "(")):
			t.Fatalf("parseSnooze(%q) = %v, %v, %v: an error says how to fix it, and gives no delay", b, d, written, err)
		case err == nil && d < 0:
			t.Fatalf("parseSnooze(%q) = %v: a negative delay", b, d)
		case err == nil && !written && (d != 0 || strings.TrimSpace(string(b)) != ""):
			t.Fatalf("parseSnooze(%q) = %v, not written, for a file with something in it", b, d)
		}
	})
}

// The snooze file of a task that cannot snooze is never made: its
// process sees no GRIT_SNOOZE_FILE.
func TestExecWithoutSnoozeCodesHasNoSnoozeFile(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st))
	tk := enqueue(t, st, task.NewTask{Kind: task.KindExec, Policy: "never", Args: execArgs(t, task.Exec{Shell: `[ -z "${GRIT_SNOOZE_FILE+set}" ]`})})
	if done := waitState(t, st, tk.ID, task.Success, task.Failed); done.State != task.Success {
		t.Errorf("%s: %s", done.State, done.LastError)
	}
}
