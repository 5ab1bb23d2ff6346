package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// FuzzValidateQuarantine: a Quarantine is refused with a FieldError, or
// its items are what the store keeps (JSON within the bound, an error,
// its fingerprint the reported failure's), and its policy is one the
// engine's rule takes.
func FuzzValidateQuarantine(f *testing.F) {
	f.Add("w1", int64(1), int64(1), []byte(`{"row":7}`), "row 7: no account", "row.fix", int32(2), 0.5)
	f.Add("", int64(0), int64(-1), []byte(`{`), "", "no spaces", int32(-1), 1.5)
	f.Add("w", int64(3), int64(9), []byte(nil), "e", "", int32(0), -0.1)
	l := limits{maxPayload: 64, maxBatch: 3}
	f.Fuzz(func(t *testing.T, worker string, id, token int64, item []byte, why, kind string, most int32, share float64) {
		r := &pb.QuarantineRequest{WorkerId: worker, TaskId: id, LeaseToken: token, Items: []*pb.QuarantineItem{{Item: item, Error: why}},
			Policy: &pb.QuarantinePolicy{Kind: kind, Max: most, MaxShare: share}}
		items, tol, err := l.quarantine(r)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Problem == "" || !errors.Is(err, task.ErrInvalid) {
				t.Fatalf("refused with %v (%T): want a FieldError", err, err)
			}
			return
		}
		if _, err := store.CheckQuarantined(items); err != nil {
			t.Fatalf("accepted %q, which the store refuses: %v", item, err)
		}
		it := items[0]
		if !json.Valid(it.Item) || it.Error == "" || it.Fingerprint != retry.Fingerprint(reported(why)) || it.ReplayKind != kind {
			t.Fatalf("accepted %+v", it)
		}
		if tol.Validate() != nil || id <= 0 || token <= 0 || (kind != "" && !nameRE.MatchString(kind)) {
			t.Fatalf("accepted id %d, token %d, policy %+v", id, token, r.GetPolicy())
		}
	})
}

// FuzzListQuarantined: a list's filter is refused naming the field, or
// bounded.
func FuzzListQuarantined(f *testing.F) {
	f.Add(int64(0), "", int32(0), "")
	f.Add(int64(-1), "ab\x00", int32(-5), "AQEB")
	f.Add(int64(7), strings.Repeat("f", 300), int32(5000), "")
	f.Fuzz(func(t *testing.T, id int64, fp string, size int32, tok string) {
		got, err := listQuarantined(&pb.ListQuarantinedRequest{TaskId: id, Fingerprint: fp, PageSize: size, PageToken: tok})
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("refused with %v (%T): want a FieldError", err, err)
			}
			return
		}
		if got.Limit < 1 || got.Limit > maxList || got.TaskID < 0 || got.AfterID < 0 || len(got.Fingerprint) > maxText {
			t.Fatalf("accepted %+v", got)
		}
	})
}
