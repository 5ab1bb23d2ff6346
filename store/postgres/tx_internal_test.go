package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestRetryingRetriesConflictsOnly(t *testing.T) {
	t.Parallel()
	conflict := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	unique := &pgconn.PgError{Code: "23505", Message: "duplicate key"}
	cases := []struct {
		name      string
		errs      []error // what each try returns; nil after the last
		wantTries int
		want      error
	}{
		{"success", nil, 1, nil},
		{"conflict then success", []error{conflict, deadlock}, 3, nil},
		{"other error at once", []error{fmt.Errorf("insert: %w", unique)}, 1, unique},
		{"conflicts without end", []error{conflict, conflict, conflict, conflict, conflict, conflict}, conflictPolicy.MaxAttempts, conflict},
	}
	for _, c := range cases {
		tries := 0
		err := retrying(context.Background(), func(context.Context) error {
			tries++
			if tries <= len(c.errs) {
				return c.errs[tries-1]
			}
			return nil
		})
		if tries != c.wantTries || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %d tries, error %v; want %d tries, error %v", c.name, tries, err, c.wantTries, c.want)
		}
		if c.name == "other error at once" && err.Error() != "insert: "+unique.Error() {
			t.Errorf("%s: error %q, want it as the operation returned it", c.name, err)
		}
	}
}
