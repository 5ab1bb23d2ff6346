package postgres_test

import (
	"strings"
	"testing"

	"github.com/grit-run/grit/store/postgres"
)

// TestAdviceWhenAutovacuumIsOff: the store advises when autovacuum does not
// clean its tasks table, on the server (a setting this test cannot change,
// so it expects what the server has) or on the table.
func TestAdviceWhenAutovacuumIsOff(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, err := postgres.Open(t.Context(), withSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var server string
	if err := admin(t).QueryRow(t.Context(), "SHOW autovacuum").Scan(&server); err != nil {
		t.Fatal(err)
	}
	want := 0
	if server == "off" {
		want = 1
	}
	got, err := s.Advice(t.Context())
	if err != nil || len(got) != want {
		t.Fatalf("advice with autovacuum %s on the server: %q (%v); want %d sentences", server, got, err, want)
	}
	if want == 1 && !strings.Contains(got[0], "autovacuum = on") {
		t.Errorf("advice %q does not say what to turn on", got[0])
	}
	if _, err := admin(t).Exec(t.Context(), "ALTER TABLE "+schema+".tasks SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	got, err = s.Advice(t.Context())
	if err != nil || len(got) != want+1 || !strings.Contains(got[want], "ALTER TABLE "+schema+".tasks RESET (autovacuum_enabled)") {
		t.Errorf("advice with autovacuum off for the table: %q (%v); want %d sentences, the last saying how to turn it back on", got, err, want+1)
	}
}
