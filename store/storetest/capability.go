package storetest

import (
	"reflect"
	"testing"

	"github.com/grit-run/grit/store"
)

// capabilityTests check that the store has every capability the engine
// and the API server require: they refuse a store without one.
var capabilityTests = map[string]func(*testing.T, *harness){
	"RequiredCapabilitiesArePresent": func(t *testing.T, h *harness) {
		if err := store.CheckCapabilities(h.s); err != nil {
			t.Fatal(err)
		}
	},
}

// required is the harness's store as the required capability C (a
// store.GroupBreakers, say); a store without it fails the test, since the
// engine would refuse it.
func required[C any](h *harness) C {
	h.t.Helper()
	c, ok := h.s.(C)
	if !ok {
		h.t.Fatalf("the store (%T) is not a %s, a required capability (see store.CheckCapabilities)", h.s, reflect.TypeFor[C]())
	}
	return c
}
