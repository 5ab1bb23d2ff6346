package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// heldEnqueues is a store whose Enqueue waits, once it has said so on
// entered, until release is closed: requests that stay in flight.
type heldEnqueues struct {
	*sqlite.Store
	entered chan struct{}
	release chan struct{}
}

func (s *heldEnqueues) Enqueue(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.Store.Enqueue(ctx, ts)
}

// TestInFlightLimit: with MaxInFlight requests being worked, the next call
// is refused unread, RESOURCE_EXHAUSTED saying the server is busy, while
// a waiting Claim and a health probe still get through; once a request
// ends its place serves another.
func TestInFlightLimit(t *testing.T) {
	t.Parallel()
	held := &heldEnqueues{entered: make(chan struct{}, 2), release: make(chan struct{})}
	h := startOn(t, server.Config{MaxInFlight: 2}, "", func(st store.Store) store.Store {
		held.Store = st.(*sqlite.Store)
		return held
	})
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k"}})
			done <- err
		}()
	}
	for range 2 {
		<-held.entered
	}
	_, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 1})
	wantCode(t, err, codes.ResourceExhausted, "busy", "2 requests in flight", "--max-in-flight")
	if _, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"nothing"}}); err != nil {
		t.Errorf("a claim at the limit: %v, want it served (claims are not counted)", err)
	}
	if _, err := healthpb.NewHealthClient(h.conn).Check(ctx(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("a health probe at the limit: %v", err)
	}
	close(held.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The places are given back when the calls end: more calls than the
	// limit, one after another, are all served.
	for range 5 {
		if _, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 1}); err != nil {
			t.Fatalf("after the held calls ended: %v", err)
		}
	}
}
