package sqlite_test

import (
	"sync"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/store/storetest"
)

func openTemp(t testing.TB) *sqlite.Store {
	t.Helper()
	path := sqlitetest.Path(t)
	s, err := sqlite.Open(t.Context(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	paths.Store(s, path)
	return s
}

// paths is the file of each store openTemp opened, for the conformance
// suite's second handle.
var paths sync.Map

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) },
		storetest.WakesAcrossHandles(func(t *testing.T, s store.Store) store.Store {
			path, ok := paths.Load(s)
			if !ok {
				t.Fatalf("no file known for %T", s)
			}
			o, err := sqlite.Open(t.Context(), path.(string))
			if err != nil {
				t.Fatal(err)
			}
			return o
		}),
		storetest.RefusesSuccesses(func(t *testing.T, s store.Store, kind string) {
			path, ok := paths.Load(s)
			if !ok {
				t.Fatalf("no file known for %T", s)
			}
			sqlitetest.Refuse(t, path.(string), kind, "refused by the test's trigger")
		}))
}

// TestDeclared: the store states its contract to the compiler, in open.go.
func TestDeclared(t *testing.T) {
	t.Parallel()
	storetest.Declared(t, (*sqlite.Store)(nil))
}
