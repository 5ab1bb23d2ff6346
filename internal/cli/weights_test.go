package cli

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/ops"
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

	// grit limits set takes a weight beside a limit, and grit limits
	// lists it on the tenant's row.
	if code, out, errOut := grit(t, "limits", "set", "tenant", "acme", "7", "--weight", "4", "--store", st); code != 0 || !strings.Contains(out, "tenant acme: weight 4") {
		t.Fatalf("limits set --weight: exit %d: %s %s", code, out, errOut)
	}
	code, out, _ = grit(t, "limits", "--json", "--store", st)
	var rows []ops.LimitRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("limits --json: exit %d, %v: %s", code, err, out)
	}
	if len(rows) != 1 || rows[0].Name != "acme" || rows[0].Max != 7 || rows[0].Weight != 4 {
		t.Errorf("limits lists %+v, want tenant acme's limit 7 and weight 4 on one row", rows)
	}
	for bad, says := range map[[2]string]string{{"queue", "2"}: "a tenant's", {"tenant", "none"}: "want a whole number"} {
		code, _, errOut := grit(t, "limits", "set", bad[0], "acme", "--weight", bad[1], "--store", st)
		if code != 2 || !strings.Contains(errOut, says) {
			t.Errorf("limits set %s acme --weight %s: exit %d (%s), want 2 saying %q", bad[0], bad[1], code, errOut, says)
		}
	}
}
