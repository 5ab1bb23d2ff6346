package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// QuarantineFileEnv names, in a process task's environment, the file its
// process writes the items it sets aside to: a JSON object a line,
// {"item": ANY-JSON, "error": "why it is bad"}, or {"seen": N} to add N to
// the items it saw (the measure of a max share).
const QuarantineFileEnv = "GRIT_QUARANTINE_FILE"

// quarantineLine is a line of a process's quarantine file.
type quarantineLine struct {
	Item  json.RawMessage `json:"item"`
	Error *string         `json:"error"`
	Seen  *int            `json:"seen"`
}

// parseQuarantine reads a process's quarantine file: its items, the items
// it said it saw, and an error naming the first line that is neither.
// The lines before a bad one are kept: what the process set aside is not
// lost for a line it wrote wrong.
func parseQuarantine(r io.Reader) (items []task.Quarantined, seen int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), task.MaxQuarantinedItem+64<<10)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l quarantineLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if derr := dec.Decode(&l); derr != nil {
			return items, seen, fmt.Errorf("%s line %d: %v: write one JSON object a line, {\"item\": …, \"error\": \"…\"} or {\"seen\": N}", QuarantineFileEnv, n, derr)
		}
		switch {
		case l.Seen != nil && l.Item == nil && l.Error == nil:
			if *l.Seen < 0 {
				return items, seen, fmt.Errorf("%s line %d: seen %d: give the number of items seen, 0 or more", QuarantineFileEnv, n, *l.Seen)
			}
			seen += *l.Seen
		case l.Seen == nil && l.Item != nil && l.Error != nil && *l.Error != "":
			if len(l.Item) > task.MaxQuarantinedItem {
				return items, seen, fmt.Errorf("%s line %d: an item of %d bytes: the most an item keeps is %d; set aside a reference to it (a key, a line number) instead", QuarantineFileEnv, n, len(l.Item), task.MaxQuarantinedItem)
			}
			msg := *l.Error
			items = append(items, task.Quarantined{Item: l.Item, Error: msg, Fingerprint: retry.Fingerprint(errors.New(msg))})
		default:
			return items, seen, fmt.Errorf("%s line %d: want {\"item\": …, \"error\": \"…\"} (both, the error not empty) or {\"seen\": N} alone", QuarantineFileEnv, n)
		}
	}
	if serr := sc.Err(); serr != nil {
		return items, seen, fmt.Errorf("%s: %v (a line longer than %d bytes? set aside a reference to a large item)", QuarantineFileEnv, serr, task.MaxQuarantinedItem)
	}
	return items, seen, nil
}

// quarantineFile is a process attempt's quarantine file.
type quarantineFile struct{ path string }

// newQuarantineFile makes an empty quarantine file for a process attempt.
func newQuarantineFile() (*quarantineFile, error) {
	f, err := os.CreateTemp("", "grit-quarantine-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("make the quarantine file: %w", err)
	}
	f.Close()
	return &quarantineFile{path: f.Name()}, nil
}

func (q *quarantineFile) env() string { return QuarantineFileEnv + "=" + q.path }

// collect records what the process wrote, under the policy p, for the
// attempt whose context ctx is, and removes the file. Its error is the
// store's, or a line the process wrote wrong (permanent: it would write
// it again).
func (q *quarantineFile) collect(ctx context.Context, p *task.ExecQuarantine) error {
	defer os.Remove(q.path)
	f, err := os.Open(q.path)
	if err != nil {
		return fmt.Errorf("read the quarantine file: %w", err)
	}
	defer f.Close()
	items, seen, perr := parseQuarantine(f)
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return errors.Join(perr, fmt.Errorf("quarantine: %w", ErrNoAttempt))
	}
	if p != nil {
		c.a.quar.pol = QuarantinePolicy{Kind: p.Kind, Max: p.Max, MaxShare: p.MaxShare}
	}
	c.a.quar.Saw(seen)
	for start := 0; start < len(items); start += 500 {
		if err := c.e.quarantine(ctx, c.a, items[start:min(start+500, len(items))]); err != nil {
			return errors.Join(err, perr)
		}
	}
	if perr != nil {
		return retry.Permanent(perr)
	}
	return nil
}
