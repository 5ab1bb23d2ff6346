package proc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec Spec
		want string // substring of the error; "" for valid
	}{
		{"argv", Spec{Argv: []string{"true"}}, ""},
		{"shell", Spec{Shell: "true"}, ""},
		{"neither", Spec{}, "proc: invalid spec: set Argv or Shell"},
		{"both", Spec{Argv: []string{"true"}, Shell: "true"}, "set Argv or Shell, not both"},
		{"empty argv0", Spec{Argv: []string{"", "x"}}, "Argv[0] is empty"},
		{"negative grace", Spec{Shell: "true", Grace: -time.Second}, "Grace -1s is negative"},
		{"negative tail", Spec{Shell: "true", TailBytes: -1}, "TailBytes -1 is negative"},
		{"env without =", Spec{Shell: "true", Env: []string{"A=1", "B"}}, `Env[1] "B" is not KEY=VALUE`},
		{"env empty key", Spec{Shell: "true", Env: []string{"=1"}}, `Env[0] "=1" is not KEY=VALUE`},
		{"env empty value", Spec{Shell: "true", Env: []string{"A="}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.spec.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("validate() = %v, want an error containing %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("validate() = %v, does not match ErrInvalidSpec", err)
			}
		})
	}
}

func TestSpecDefaults(t *testing.T) {
	t.Parallel()
	var s Spec
	if s.grace() != DefaultGrace || s.tailBytes() != DefaultTailBytes {
		t.Errorf("zero Spec: grace %v, tail %d; want %v, %d", s.grace(), s.tailBytes(), DefaultGrace, DefaultTailBytes)
	}
	s = Spec{Grace: time.Millisecond, TailBytes: 10}
	if s.grace() != time.Millisecond || s.tailBytes() != 10 {
		t.Errorf("set Spec: grace %v, tail %d; want 1ms, 10", s.grace(), s.tailBytes())
	}
}

func TestSpecLabel(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 70)
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Argv: []string{"foo", "bar"}}, `"foo"`},
		{Spec{Shell: "exit 1"}, `sh -c "exit 1"`},
		{Spec{Shell: long}, `sh -c "` + strings.Repeat("é", 60) + `…"`},
	}
	for _, tt := range tests {
		if got := tt.spec.label(); got != tt.want {
			t.Errorf("label() = %s, want %s", got, tt.want)
		}
	}
}
