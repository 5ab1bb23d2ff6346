package postgres_test

import (
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/storetest"
)

func TestConformance(t *testing.T) {
	admin(t) // skip (or fail, in CI) once, not in every subtest
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}
