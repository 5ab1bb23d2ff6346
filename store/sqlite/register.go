package sqlite

import (
	"context"

	"github.com/grit-run/grit/store"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, dsn string) (store.Store, error) {
		return Open(ctx, dsn)
	})
}
