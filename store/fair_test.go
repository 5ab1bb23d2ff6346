package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestFairRanks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ts   []task.NewTask
		want []int
	}{
		{"one lane, in the order given", []task.NewTask{{Tenant: "a"}, {Tenant: "a"}, {Tenant: "a"}}, []int{1, 2, 3}},
		{"each tenant its own lane", []task.NewTask{{Tenant: "a"}, {Tenant: "b"}, {Tenant: "a"}, {}}, []int{1, 1, 2, 1}},
		{"queue and priority part of the lane; \"\" is default",
			[]task.NewTask{{Queue: "default"}, {}, {Queue: "mail"}, {Priority: 5}}, []int{1, 2, 1, 1}},
		{"in due order", []task.NewTask{{RunAt: now.Add(-time.Second)}, {RunAt: now.Add(-time.Minute)}, {}},
			[]int{2, 1, 3}},
		{"not due yet: not ranked", []task.NewTask{{RunAt: now.Add(time.Second)}, {RunAt: now}, {}}, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		if got := store.FairRanks(tc.ts, now); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ranks %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLanes(t *testing.T) {
	t.Parallel()
	ts := []task.NewTask{{Tenant: "b"}, {Tenant: "a"}, {Tenant: "b"}, {Tenant: "c", RunAt: time.Now().Add(time.Hour)}}
	got := store.Lanes(ts, []int{1, 1, 2, 0})
	want := []store.Lane{{Queue: "default", Tenant: "a"}, {Queue: "default", Tenant: "b"}}
	if !slices.Equal(got, want) {
		t.Errorf("lanes %v, want %v (distinct, ranked only, sorted)", got, want)
	}
}

func TestValidateWeight(t *testing.T) {
	t.Parallel()
	for _, w := range []int{1, 3, store.MaxWeight} {
		if err := store.ValidateWeight("acme", w); err != nil {
			t.Errorf("weight %d: %v", w, err)
		}
	}
	for _, w := range []int{0, -1, store.MaxWeight + 1} {
		if err := store.ValidateWeight("acme", w); err == nil {
			t.Errorf("weight %d: no error", w)
		}
	}
	if err := store.ValidateWeight(string(make([]byte, 201)), 2); err == nil {
		t.Error("a tenant name of 201 bytes: no error")
	}
}
