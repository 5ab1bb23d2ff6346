package store

import "testing"

func TestSameJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[2,3]}`, `{ "b" : [2, 3], "a" : 1 }`, true},
		{``, `null`, true},
		{``, ` `, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1.0}`, false}, // numbers by their text
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`"x"`, `"x"`, true},
		{`{"a":1}`, `{"a":1} {}`, false}, // not one JSON value
		{``, `{}`, false},
	} {
		if got := SameJSON([]byte(c.a), []byte(c.b)); got != c.same {
			t.Errorf("SameJSON(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
