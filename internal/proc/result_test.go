package proc

import "testing"

func TestResultLastLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stderr string
		want   string
	}{
		{"", ""},
		{"\n\n  \n", ""},
		{"boom", "boom"},
		{"boom\n", "boom"},
		{"first\nsecond\n", "second"},
		{"first\nsecond\n\n \t\n", "second"},
		{"first\r\nlast error: id 42\r\n", "last error: id 42"},
		{"  indented  \n", "indented"},
		{"first\nunterminated", "unterminated"},
	}
	for _, tt := range tests {
		if got := (Result{Stderr: []byte(tt.stderr)}).LastLine(); got != tt.want {
			t.Errorf("LastLine() of %q = %q, want %q", tt.stderr, got, tt.want)
		}
	}
}
