package sqlite

import (
	"context"

	"github.com/grit-run/grit/store"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, dsn string) (store.Store, error) {
		s, err := Open(ctx, dsn)
		if err != nil {
			return nil, err // not a nil *Store in a non-nil interface
		}
		return s, nil
	})
	store.RegisterExisting("sqlite", func(ctx context.Context, dsn string) (store.Store, error) {
		s, err := OpenExisting(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return s, nil
	})
	store.RegisterScript("sqlite", Script)
}
