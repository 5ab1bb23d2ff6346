package postgres

import (
	"testing"
	"time"
)

// TestConnectTimeout: a connection attempt is bounded by
// DefaultConnectTimeout unless the DSN sets connect_timeout, in either
// form of DSN.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dsn  string
		want time.Duration
	}{
		{"postgres://u@h:5432/db", DefaultConnectTimeout},
		{"postgres://u@h:5432/db?schema=jobs&sslmode=disable", DefaultConnectTimeout},
		{"postgres://u@h:5432/db?connect_timeout=3", 3 * time.Second},
		{"host=h dbname=db", DefaultConnectTimeout},
		{"host=h dbname=db connect_timeout=7", 7 * time.Second},
	} {
		p, err := Config{DSN: c.dsn}.parse()
		if err != nil {
			t.Fatalf("%s: %v", c.dsn, err)
		}
		if got := p.pool.ConnConfig.ConnectTimeout; got != c.want {
			t.Errorf("%s: connect timeout %v, want %v", c.dsn, got, c.want)
		}
	}
}
