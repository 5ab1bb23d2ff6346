package postgres

import (
	"context"

	"github.com/grit-run/grit/store"
)

func init() {
	// store.Open maps postgresql:// to this scheme too.
	store.Register("postgres", func(ctx context.Context, dsn string) (store.Store, error) {
		s, err := Open(ctx, dsn)
		if err != nil {
			return nil, err // not a nil *Store in a non-nil interface
		}
		return s, nil
	})
	store.RegisterExisting("postgres", func(ctx context.Context, dsn string) (store.Store, error) {
		s, err := OpenExisting(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return s, nil
	})
	store.RegisterScript("postgres", Script)
}
