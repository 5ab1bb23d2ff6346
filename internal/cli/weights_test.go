package cli

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// TestLimitsWeightSetAndList: grit limits weight sets tenants' weights in
// fair claims and lists them; the default weight removes one, and a bad
// weight is a usage error that says what to give.
func TestLimitsWeightSetAndList(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	for _, args := range [][]string{{"acme", "3"}, {"globex", "2"}, {"acme", "5"}} {
		if code, out, errOut := grit(t, append([]string{"limits", "weight"}, append(args, "--store", st)...)...); code != 0 || !strings.Contains(out, "weight "+args[1]) {
			t.Fatalf("weight %v: exit %d: %s %s", args, code, out, errOut)
		}
	}
	if code, out, _ := grit(t, "limits", "weight", "globex", "1", "--store", st); code != 0 {
		t.Fatalf("back to the default: exit %d: %s", code, out)
	}
	code, out, _ := grit(t, "limits", "weight", "--json", "--store", st)
	var got map[string]int
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	if want := map[string]int{"acme": 5}; !maps.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for _, bad := range [][]string{{"acme", "0"}, {"acme", "heavy"}, {"acme", "1001"}, {"acme"}} {
		code, _, errOut := grit(t, append([]string{"limits", "weight"}, append(bad, "--store", st)...)...)
		if code != 2 || errOut == "" {
			t.Errorf("weight %v: exit %d (%s), want 2 with a message", bad, code, errOut)
		}
	}
}
