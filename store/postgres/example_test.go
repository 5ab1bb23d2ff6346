package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// An order and the task that ships it commit together, or not at all.
func ExampleStore_EnqueueTx() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://grit@localhost:5432/shop?schema=grit")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (id) VALUES ($1)`, 42); err != nil {
			return err
		}
		_, err := s.EnqueueTx(ctx, tx, []task.NewTask{{Kind: "ship", Args: []byte(`{"order":42}`)}})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A worker sleeps until a task may be due, rather than polling.
func ExampleStore_Wake() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://grit@localhost:5432/shop")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	woken, err := s.Wake(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for range woken {
		ts, err := s.Claim(ctx, store.ClaimRequest{Worker: "w1", Limit: 100})
		if err != nil {
			log.Print(err)
			continue
		}
		fmt.Println("claimed", len(ts))
	}
}
