package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

func TestOpenExistingReachesItsOwnOpener(t *testing.T) {
	t.Parallel()
	scheme := fmt.Sprintf("fake-%d", fakeSchemes.Add(1))
	store.Register(scheme, func(ctx context.Context, dsn string) (store.Store, error) {
		return nil, errors.New("created")
	})
	ctx := context.Background()
	if _, err := store.OpenExisting(ctx, scheme+":x"); err == nil || !strings.Contains(err.Error(), "cannot open an existing store without creating it") {
		t.Errorf("a driver without an existing opener: %v", err)
	}
	store.RegisterExisting(scheme, func(ctx context.Context, dsn string) (store.Store, error) {
		return nil, &store.OpenError{Kind: store.ErrNotExist, Err: errors.New("no grit store at " + dsn)}
	})
	_, err := store.OpenExisting(ctx, scheme+":x")
	if !errors.Is(err, store.ErrNotExist) || errors.Is(err, store.ErrUnreachable) || err.Error() != "no grit store at "+scheme+":x" {
		t.Errorf("OpenExisting: %v", err)
	}
	if _, err := store.Open(ctx, scheme+":x"); err == nil || err.Error() != "created" {
		t.Errorf("Open: %v", err)
	}
	if _, err := store.OpenExisting(ctx, "nosuch:x"); err == nil || !strings.Contains(err.Error(), `no driver for "nosuch"`) {
		t.Errorf("unknown scheme: %v", err)
	}
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	ms := []store.Migration{{Version: 1}, {Version: 2}, {Version: 3}}
	tests := []struct {
		applied []int
		says    string // "" for nil
	}{
		{[]int{1, 2, 3}, ""},
		{[]int{1, 2}, "has schema version 2, older than this grit needs (3): run grit migrate"},
		{nil, "has schema version 0, older than this grit needs (3): run grit migrate"},
		{[]int{1, 3}, "lacks schema migrations [2]: run grit migrate"},
		{[]int{1, 2, 3, 4}, "has schema version 4, newer than this grit knows (3): upgrade grit"},
	}
	for _, tt := range tests {
		applied := map[int]bool{}
		for _, v := range tt.applied {
			applied[v] = true
		}
		err := store.CheckSchema("x.db", applied, ms)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%v: %v", tt.applied, err)
		case tt.says != "" && (!errors.Is(err, store.ErrSchemaVersion) || err.Error() != "the grit store at x.db "+tt.says):
			t.Errorf("%v: %v, want ErrSchemaVersion saying %q", tt.applied, err, tt.says)
		}
	}
}
