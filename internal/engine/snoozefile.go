package engine

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// snoozeFileEnv names, in the environment of a process task that can
// snooze (task.Exec.SnoozeOnExit), the file in which it may write how long
// to snooze.
const snoozeFileEnv = "GRIT_SNOOZE_FILE"

// maxSnoozeFile bounds what is read of a snooze file: a delay is short,
// and a process that writes more wrote something else.
const maxSnoozeFile = 256

// snoozeFile is an attempt's snooze file: empty, in a directory of its
// own, made for the attempt and removed after it, so that a delay written
// by one attempt is never read as another's.
type snoozeFile struct{ dir, path string }

func newSnoozeFile() (*snoozeFile, error) {
	dir, err := os.MkdirTemp("", "grit-attempt-")
	if err != nil {
		return nil, err
	}
	f := &snoozeFile{dir: dir, path: filepath.Join(dir, "snooze")}
	if err := os.WriteFile(f.path, nil, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return f, nil
}

func (f *snoozeFile) env() string { return snoozeFileEnv + "=" + f.path }

func (f *snoozeFile) remove() { os.RemoveAll(f.dir) }

// snooze is the SnoozeError of a process that exited with code, one of
// x.SnoozeOnExit: for the delay it wrote to its snooze file, else x's
// (task.DefaultSnooze when x sets none). A file that does not hold a
// delay fails the attempt, permanently: running the process again would
// not mend what it writes.
func (f *snoozeFile) snooze(x task.Exec, code int) error {
	d := x.Snooze
	if d == 0 {
		d = task.DefaultSnooze
	}
	b, err := f.read()
	if err == nil {
		var written bool
		var w time.Duration
		if w, written, err = parseSnooze(b); written {
			d = w
		}
	}
	if err != nil {
		return retry.Permanent(fmt.Errorf("exit status %d asks to snooze, but its snooze file ($%s) %w", code, snoozeFileEnv, err))
	}
	return &SnoozeError{Delay: d, Max: x.MaxSnoozes}
}

func (f *snoozeFile) read() ([]byte, error) {
	h, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("could not be read: %w (write the delay into the file, do not remove or replace it)", err)
	}
	defer h.Close()
	b, err := io.ReadAll(io.LimitReader(h, maxSnoozeFile+1))
	if err != nil {
		return nil, fmt.Errorf("could not be read: %w", err)
	}
	if len(b) > maxSnoozeFile {
		return nil, fmt.Errorf("holds more than %d bytes (write only the delay, such as 30s)", maxSnoozeFile)
	}
	return b, nil
}

// secondsRE is a number of seconds as a snooze file may hold it.
var secondsRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// parseSnooze reads what a process wrote to its snooze file: a Go duration
// ("30s", "1m30s", "250ms") or a number of seconds ("30", "1.5"), alone,
// blank space around it allowed. Nothing written (an empty or blank file)
// says nothing: written is false, and the task's own delay applies.
func parseSnooze(b []byte) (d time.Duration, written bool, err error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, false, nil
	}
	if secondsRE.MatchString(s) {
		secs, perr := strconv.ParseFloat(s, 64)
		if perr != nil || secs*float64(time.Second) >= math.MaxInt64 {
			return 0, false, fmt.Errorf("holds %s, too many seconds (write a shorter delay, such as 30s or 2h)", quoteSnooze(s))
		}
		return time.Duration(secs * float64(time.Second)), true, nil
	}
	d, err = time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("holds %s, which is not a delay (write a Go duration such as 30s or 2m, or a number of seconds such as 30)", quoteSnooze(s))
	case d < 0:
		return 0, false, fmt.Errorf("holds %s, a negative delay (write how long to wait, such as 30s)", quoteSnooze(s))
	}
	return d, true, nil
}

// quoteSnooze quotes what a snooze file held, cut short when long.
func quoteSnooze(s string) string {
	const most = 40
	if r := []rune(s); len(r) > most {
		s = string(r[:most]) + "…"
	}
	return strconv.Quote(s)
}
