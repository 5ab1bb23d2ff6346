package postgres

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/task"
)

// Rows of taskCols are read straight from their wire values when they come
// in the binary format the store's prepared statements get: through Scan,
// a row cost a busy worker about fifteen allocations (its destinations
// escape, each string is new) and a third of the claim's time in the
// worker. A result in any other shape (a DSN that asks for the simple
// protocol gets text) is read through Scan.

// taskColTypes are the types of taskCols, in order.
var taskColTypes = [...]uint32{
	pgtype.Int8OID, pgtype.Int8OID, pgtype.TextOID, pgtype.TextOID, pgtype.ByteaOID, pgtype.TextOID, pgtype.TextOID,
	pgtype.Int4OID, pgtype.TextOID, pgtype.TextOID, pgtype.Int4OID, pgtype.Int8OID, pgtype.Int8OID,
	pgtype.Int4OID, pgtype.TimestamptzOID, pgtype.Int8OID, pgtype.TextOID, pgtype.Int8OID, pgtype.TimestamptzOID,
	pgtype.TextOID, pgtype.TextOID, pgtype.Int4OID, pgtype.TextOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID,
	pgtype.TimestamptzOID, pgtype.TextOID, pgtype.Int4OID, pgtype.TextOID, pgtype.TextOID, pgtype.Int4OID,
	pgtype.Int4OID, pgtype.TextOID,
}

// rawTaskRows reports whether rows of fds can be read by taskRow: the
// types of taskCols, each in binary (text may come in either format: its
// bytes are the same).
func rawTaskRows(fds []pgconn.FieldDescription) bool {
	if len(fds) != len(taskColTypes) {
		return false
	}
	for i, fd := range fds {
		if fd.DataTypeOID != taskColTypes[i] || fd.Format != pgx.BinaryFormatCode && fd.DataTypeOID != pgtype.TextOID {
			return false
		}
	}
	return true
}

// taskRow reads rows of taskCols from their wire values. It keeps one copy
// of each string it has read (kind, queue, state, owner…): the rows of a
// claim mostly repeat them.
type taskRow struct {
	strs map[string]string
	err  error
}

// errRawValue is a wire value of the wrong size for its type.
var errRawValue = errors.New("malformed value")

func (r *taskRow) read(vs [][]byte) (task.Task, error) {
	r.err = nil
	var t task.Task
	t.ID = r.int8(vs, 0)
	t.RunID = r.int8(vs, 1)
	t.Name, t.Kind = r.text(vs[2]), r.text(vs[3])
	if vs[4] != nil {
		t.Args = json.RawMessage(bytes.Clone(vs[4]))
	}
	t.Queue, t.Group = r.text(vs[5]), r.text(vs[6])
	t.Priority = r.int4(vs, 7)
	t.State, t.Policy = task.State(r.text(vs[8])), r.text(vs[9])
	t.PoisonAfter = r.int4(vs, 10)
	t.Timeout, t.Grace = time.Duration(r.int8(vs, 11)), time.Duration(r.int8(vs, 12))
	t.Attempt = r.int4(vs, 13)
	t.NextAt = r.time(vs, 14)
	t.PrevDelay = time.Duration(r.int8(vs, 15))
	t.LeaseOwner, t.LeaseToken, t.LeaseExpires = r.text(vs[16]), r.int8(vs, 17), r.time(vs, 18)
	t.LastError, t.Fingerprint = r.text(vs[19]), r.text(vs[20])
	t.Streak = r.int4(vs, 21)
	t.IdempotencyKey = r.text(vs[22])
	t.CreatedAt, t.FirstStartedAt, t.FinishedAt = r.time(vs, 23), r.time(vs, 24), r.time(vs, 25)
	t.Tenant = r.text(vs[26])
	t.Deferrals = r.int4(vs, 27)
	t.Trace, t.AttemptTrace = r.trace(vs[28]), r.trace(vs[29])
	t.Snoozes = r.int4(vs, 30)
	t.Waits = r.int4(vs, 31)
	t.Origin = r.text(vs[32])
	if r.err != nil {
		return task.Task{}, r.err
	}
	if t.State != task.Running {
		t.LeaseOwner = "" // as scanTask
	}
	return t, nil
}

// text is a text value (NULL: ""), one copy per distinct string.
func (r *taskRow) text(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	if s, ok := r.strs[string(v)]; ok {
		return s
	}
	s := string(v)
	if r.strs == nil {
		r.strs = make(map[string]string)
	}
	if len(r.strs) < maxInterned {
		r.strs[s] = s
	}
	return s
}

// trace is a trace context: distinct in every task, so never interned.
func (r *taskRow) trace(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	return string(v)
}

// maxInterned bounds the strings a taskRow keeps: a column of distinct
// values (names, errors) would otherwise fill it for nothing.
const maxInterned = 256

func (r *taskRow) int8(vs [][]byte, i int) int64 {
	v := vs[i]
	if v == nil {
		return 0
	}
	if len(v) != 8 {
		r.fail(i, v)
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func (r *taskRow) int4(vs [][]byte, i int) int {
	v := vs[i]
	if v == nil {
		return 0
	}
	if len(v) != 4 {
		r.fail(i, v)
		return 0
	}
	return int(int32(binary.BigEndian.Uint32(v)))
}

// time is a timestamptz in UTC (NULL, and infinity, which grit never
// writes: the zero time, as fromTS).
func (r *taskRow) time(vs [][]byte, i int) time.Time {
	v := vs[i]
	if v == nil {
		return time.Time{}
	}
	if len(v) != 8 {
		r.fail(i, v)
		return time.Time{}
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us == math.MaxInt64 || us == math.MinInt64 { // infinity, -infinity
		return time.Time{}
	}
	return time.Unix(pgEpochUnix+us/1e6, us%1e6*1e3).UTC()
}

// pgEpochUnix is 2000-01-01 00:00 UTC, where timestamptz counts its
// microseconds from, in Unix seconds.
const pgEpochUnix = 946684800

func (r *taskRow) fail(i int, v []byte) {
	if r.err == nil {
		r.err = fmt.Errorf("task column %d: %d bytes: %w", i, len(v), errRawValue)
	}
}
