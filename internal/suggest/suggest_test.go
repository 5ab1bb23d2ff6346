package suggest

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	among := []string{"queue", "kind", "tenant"}
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"queues", "queue", true},
		{"Queue", "queue", true},
		{"knid", "kind", true},
		{"tenants", "tenant", true},
		{"group", "", false},
		{"x", "", false}, // no nearer than it is long
	} {
		got, ok := Closest(tt.in, among)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
