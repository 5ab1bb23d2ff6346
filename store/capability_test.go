package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// bare is a store wrapper that embeds the Store interface alone, as a
// wrapper written in a hurry does: it hides every capability of the store
// it wraps.
type bare struct{ store.Store }

// capable has every required capability and no optional one.
type capable struct {
	store.Store
	store.GroupBreakers
	store.Limiter
	store.Publisher
	store.Durations
}

// complete has every capability.
type complete struct {
	capable
	store.Waker
	store.Advisor
	store.Overview
	store.PollReporter
	store.Backlog
	store.Pauser
	store.Pruner
	store.Scheduler
	store.Stepper
	store.Machines
}

// noBreakers has every capability but GroupBreakers.
type noBreakers struct {
	store.Store
	store.Limiter
	store.Publisher
	store.Durations
}

func TestCheckCapabilitiesNamesEachMissing(t *testing.T) {
	err := store.CheckCapabilities(bare{})
	if !errors.Is(err, store.ErrMissingCapability) {
		t.Fatalf("a bare wrapper: %v, want ErrMissingCapability", err)
	}
	var ce *store.CapabilityError
	if !errors.As(err, &ce) || ce.Store != "store_test.bare" || len(ce.Missing) != 4 {
		t.Fatalf("a bare wrapper: %#v, want a CapabilityError naming store_test.bare and its 4 missing capabilities", ce)
	}
	msg := err.Error()
	for _, want := range []string{
		"store: store_test.bare lacks ",
		"store.GroupBreakers (the groups' circuit breakers, retry budgets and limits",
		"store.Limiter (", "store.Publisher (", "store.Durations (",
		"implement them (the conformance suite store/storetest checks each)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}

	err = store.CheckCapabilities(&noBreakers{})
	if !errors.Is(err, store.ErrMissingCapability) || !errors.As(err, &ce) || strings.Join(ce.Missing, ",") != "store.GroupBreakers" {
		t.Fatalf("a store without breakers: %v, want it alone named", err)
	}
	want := "store: *store_test.noBreakers lacks store.GroupBreakers (the groups' circuit breakers, retry budgets and limits, " +
		"shared by the fleet): workers would call a failing downstream with no breaker, budget or limit; " +
		"implement it (the conformance suite store/storetest checks each)"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}

	for name, st := range map[string]store.Store{"capable": capable{}, "complete": complete{}} {
		if err := store.CheckCapabilities(st); err != nil {
			t.Errorf("%s: %v, want none missing", name, err)
		}
	}
}

func TestMissingOptional(t *testing.T) {
	got := store.MissingOptional(capable{})
	if len(got) != 10 {
		t.Fatalf("capable lacks %d optional capabilities, want 10: %q", len(got), got)
	}
	for i, name := range []string{"store.Waker (", "store.Advisor (", "store.Overview (", "store.PollReporter (", "store.Backlog (", "store.Pauser (", "store.Pruner (", "store.Scheduler (", "store.Stepper (", "store.Machines ("} {
		if !strings.HasPrefix(got[i], name) || !strings.Contains(got[i], ": ") {
			t.Errorf("entry %d is %q, want %s... with what is lost", i, got[i], name)
		}
	}
	if !strings.Contains(got[0], "next poll") {
		t.Errorf("the Waker entry does not say workers poll instead: %q", got[0])
	}
	if got := store.MissingOptional(complete{}); len(got) != 0 {
		t.Errorf("complete lacks %q", got)
	}
	if got := store.MissingOptional(bare{}); len(got) != 10 {
		t.Errorf("bare lacks %d optional capabilities, want 7: %q", len(got), got)
	}
}
