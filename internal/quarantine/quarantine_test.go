package quarantine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// TestTolerance: the verdict of the one rule both claimers judge by.
func TestTolerance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tol         quarantine.Tolerance
		total, seen int
		past, fails bool
		says        string
	}{
		{quarantine.Tolerance{}, 100, 0, false, false, ""},
		{quarantine.Tolerance{Max: 2}, 2, 0, false, false, ""},
		{quarantine.Tolerance{Max: 2}, 3, 0, true, true, "set aside 3 items, more than the 2 it tolerates"},
		{quarantine.Tolerance{MaxShare: 0.1}, 1, 10, false, false, ""},
		{quarantine.Tolerance{MaxShare: 0.1}, 2, 10, false, true, "set aside 2 of the 10 items it reported it saw"},
		{quarantine.Tolerance{MaxShare: 0.5}, 1, 0, false, true, "1 of the 0 items"},
		{quarantine.Tolerance{MaxShare: 0.5}, 0, 0, false, false, ""},
	} {
		past, verdict := c.tol.Past(c.total), c.tol.Verdict(c.total, c.seen)
		if (past != nil) != c.past || (verdict != nil) != c.fails {
			t.Errorf("%+v, %d of %d: past %v, verdict %v", c.tol, c.total, c.seen, past, verdict)
			continue
		}
		if verdict != nil && (!errors.Is(verdict, quarantine.ErrTooMany) || !errors.Is(verdict, retry.ErrPermanent) || !strings.Contains(verdict.Error(), c.says)) {
			t.Errorf("%+v, %d of %d: %v, want permanent, ErrTooMany, saying %q", c.tol, c.total, c.seen, verdict, c.says)
		}
	}
	for _, bad := range []quarantine.Tolerance{{Max: -1}, {MaxShare: -0.1}, {MaxShare: 1.1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// TestCheckAndUnknown: items are named by ids or a fingerprint, one of
// the two; Unknown names the ids that are not quarantined, once each.
func TestCheckAndUnknown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ids []int64
		fp  string
		ok  bool
	}{{[]int64{1}, "", true}, {nil, "f", true}, {[]int64{1}, "f", false}, {nil, "", false}, {[]int64{0}, "", false}} {
		if err := quarantine.Check(c.ids, c.fp); (err == nil) != c.ok || (err != nil && !errors.Is(err, task.ErrInvalid)) {
			t.Errorf("Check(%v, %q): %v", c.ids, c.fp, err)
		}
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "import"}}); err != nil {
		t.Fatal(err)
	}
	cl, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{"import"}, Limit: 1})
	if err != nil || len(cl) != 1 {
		t.Fatalf("claim: %v %v", cl, err)
	}
	if _, err := st.Quarantine(ctx, cl[0].ID, cl[0].LeaseToken, []task.Quarantined{{Item: []byte(`1`), Error: "e", Fingerprint: "f"}}); err != nil {
		t.Fatal(err)
	}
	items, _ := st.ListQuarantined(ctx, task.QuarantineFilter{})
	id := items[0].ID
	got, err := quarantine.Unknown(ctx, st, []int64{id, 77, 77, 78})
	if err != nil || len(got) != 2 || got[0] != 77 || got[1] != 78 {
		t.Errorf("Unknown: %v %v, want [77 78]", got, err)
	}
}
