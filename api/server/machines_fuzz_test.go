package server

import (
	"errors"
	"strings"
	"testing"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/task"
)

// FuzzValidateSend: a SendRequest is refused with a FieldError on one of
// its fields, or accepted with names package fsm takes, a key the stores
// take and a payload within the limit that is JSON.
func FuzzValidateSend(f *testing.F) {
	f.Add("order", "o-1042", "paid", []byte(`{"cents":1200}`))
	f.Add("", "", "", []byte(nil))
	f.Add("a:b", strings.Repeat("k", 501), "paid now", []byte(`{`))
	f.Add("m", "k\x00", "e", []byte(`"`+strings.Repeat("x", 80)+`"`))
	l := limits{maxPayload: 64, maxBatch: 3}
	f.Fuzz(func(t *testing.T, machine, key, event string, payload []byte) {
		err := l.send(&pb.SendRequest{Machine: machine, Key: key, Event: event, Payload: payload})
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Problem == "" || !errors.Is(err, task.ErrInvalid) ||
				!strings.Contains(" machine key event payload ", " "+fe.Field+" ") {
				t.Fatalf("rejected with %v (%T): want a FieldError on a field of the request", err, err)
			}
			return
		}
		switch {
		case fsm.NameProblem(machine) != "", fsm.NameProblem(event) != "":
			t.Fatalf("accepted machine %q, event %q, which package fsm refuses", machine, event)
		case key == "" || len(key) > 500:
			t.Fatalf("accepted key %q", key)
		case len(payload) > l.maxPayload || task.JSONProblem(payload) != "":
			t.Fatalf("accepted payload %q", payload)
		}
	})
}
