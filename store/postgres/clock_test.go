package postgres_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestTimesComeFromTheDatabaseClock: every time the store sets is a
// reading of the database's clock. Times set by one statement are equal to
// the microsecond (one transaction timestamp, which no worker's clock could
// produce twice), and lie between two readings of the database's clock
// taken around the call.
func TestTimesComeFromTheDatabaseClock(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := bounded(t)
	dbNow := func() time.Time {
		var now time.Time
		if err := admin(t).QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	between := func(what string, tm, lo, hi time.Time) {
		t.Helper()
		if tm.Before(lo) || tm.After(hi) {
			t.Errorf("%s %v is not within the database's clock readings %v .. %v", what, tm, lo, hi)
		}
	}

	before := dbNow()
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	between("Now", now, before, dbNow())

	before = dbNow()
	e, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	between("CreatedAt", e[0].CreatedAt, before, dbNow())
	if !e[0].NextAt.Equal(e[0].CreatedAt) {
		t.Errorf("NextAt %v != CreatedAt %v: not one database timestamp", e[0].NextAt, e[0].CreatedAt)
	}

	before = dbNow()
	c, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Hour})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	between("FirstStartedAt", c[0].FirstStartedAt, before, dbNow())
	if d := c[0].LeaseExpires.Sub(c[0].FirstStartedAt); d != time.Hour {
		t.Errorf("lease expires %v after the claim, want exactly 1h on the database's clock", d)
	}
	as, err := s.Attempts(ctx, c[0].ID)
	if err != nil || len(as) != 1 || !as[0].StartedAt.Equal(c[0].FirstStartedAt) {
		t.Errorf("attempt %+v (%v), want started at the claim's %v", as, err, c[0].FirstStartedAt)
	}

	before = dbNow()
	if _, err := s.Finish(ctx, []store.Finish{{TaskID: c[0].ID, Token: c[0].LeaseToken, State: task.Retrying}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTask(ctx, c[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	between("a retry's NextAt", got.NextAt, before, dbNow())
	as, _ = s.Attempts(ctx, c[0].ID)
	if !as[0].EndedAt.Equal(got.NextAt) {
		t.Errorf("attempt ended %v, retry due %v: not one database timestamp", as[0].EndedAt, got.NextAt)
	}
}
