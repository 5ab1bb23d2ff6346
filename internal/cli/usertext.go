package cli

import (
	"errors"
	"strings"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
)

// sentinels are the errors the layers below match with errors.Is. Their
// text ("task: invalid") is for programs, not for the user: the message
// around them says what was wrong, so a message to the user leaves it out.
var sentinels = []error{task.ErrNotFound, task.ErrLeaseLost, task.ErrWrongState, task.ErrDuplicate, task.ErrInvalid,
	task.ErrKeyConflict, task.ErrRefused, schedule.ErrInvalid, fsm.ErrInvalid}

// userText is err as grit prints it to the user: without the sentinels'
// wording.
func userText(err error) string {
	s := err.Error()
	for _, sen := range sentinels {
		if errors.Is(err, sen) {
			s = withoutSentinel(s, sen)
		}
	}
	return s
}

// plainRemote is the message of a server's error without the sentinels'
// wording, which comes over the wire as text.
func plainRemote(msg string) string {
	for _, sen := range sentinels {
		msg = withoutSentinel(msg, sen)
	}
	return msg
}

func withoutSentinel(s string, sen error) string {
	s = strings.ReplaceAll(s, ": "+sen.Error(), "")
	if rest, ok := strings.CutPrefix(s, sen.Error()+": "); ok {
		return rest
	}
	return s
}
