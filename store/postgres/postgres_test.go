package postgres_test

import (
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	admin(t) // skip (or fail, in CI) once, not in every subtest
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) },
		// LISTEN/NOTIFY: a wake for work made due by any process.
		storetest.WakesAcrossHandles(func(t *testing.T, s store.Store) store.Store {
			return openIn(t, s.(*postgres.Store).Schema())
		}),
		storetest.CancelsAcrossHandles(),
		storetest.RefusesSuccesses(func(t *testing.T, s store.Store, kind string) {
			pgtest.Refuse(t, s.(*postgres.Store).Schema(), kind, "refused by the test's trigger")
		}))
}

// TestDeclared: the store states its contract to the compiler, in open.go.
func TestDeclared(t *testing.T) {
	t.Parallel()
	storetest.Declared(t, (*postgres.Store)(nil))
}
