package server_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
)

// noBreakers passes every capability of its store on but GroupBreakers.
type noBreakers struct {
	store.Store
	store.Limiter
	store.Publisher
	store.Durations
}

// TestNewRefusesAStoreWithoutARequiredCapability: remote workers' claims
// on a store without breakers would go out with no downstream
// protection, silently; New refuses the store and says what it lacks.
func TestNewRefusesAStoreWithoutARequiredCapability(t *testing.T) {
	st, err := sqlite.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for name, s := range map[string]store.Store{
		"a wrapper of the Store interface alone": struct{ store.Store }{st},
		"a wrapper without GroupBreakers":        noBreakers{st, st, st, st},
	} {
		_, err := server.New(server.Config{Store: s})
		if !errors.Is(err, server.ErrConfig) || !errors.Is(err, store.ErrMissingCapability) ||
			!strings.Contains(err.Error(), "lacks store.GroupBreakers (") {
			t.Errorf("%s: New = %v, want ErrConfig and ErrMissingCapability naming store.GroupBreakers", name, err)
		}
	}
	if _, err := server.New(server.Config{Store: st}); err != nil {
		t.Errorf("New on the SQLite store: %v", err)
	}
}
