package task

import "testing"

func TestStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s                                   State
		terminal, waiting, satisfies, valid bool
	}{
		{Pending, false, false, false, true},
		{Ready, false, true, false, true},
		{Running, false, false, false, true},
		{Retrying, false, true, false, true},
		{Sensing, false, true, false, true},
		{Success, true, false, true, true},
		{Failed, true, false, false, true},
		{UpstreamFailed, true, false, false, true},
		{DeadLetter, false, false, false, true},
		{Skipped, true, false, true, true},
		{Cancelled, true, false, false, true},
		{"DONE", false, false, false, false},
	}
	for _, tt := range tests {
		if tt.s.Terminal() != tt.terminal || tt.s.Waiting() != tt.waiting || tt.s.Satisfies() != tt.satisfies || tt.s.Valid() != tt.valid {
			t.Errorf("%s: terminal %v waiting %v satisfies %v valid %v", tt.s, tt.s.Terminal(), tt.s.Waiting(), tt.s.Satisfies(), tt.s.Valid())
		}
	}
}

func TestParseState(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"DEAD_LETTER", "dead_letter", "Dead_Letter"} {
		if s, err := ParseState(in); err != nil || s != DeadLetter {
			t.Errorf("ParseState(%q) = %q, %v", in, s, err)
		}
	}
	for _, in := range []string{"", "DEAD-LETTER", "DONE", "SUCCESSFUL"} {
		if _, err := ParseState(in); err == nil {
			t.Errorf("ParseState(%q) succeeded", in)
		}
	}
}
