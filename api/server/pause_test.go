package server_test

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
)

// TestPausedKindIsNotClaimedByARemoteWorker: a remote worker that asks
// for a paused kind, alone or with another kind that has nothing due,
// gets nothing, and waits out its claim's wait rather than spinning; the
// other kind's task was claimed; resumed, the paused task is claimed.
func TestPausedKindIsNotClaimedByARemoteWorker(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	var st store.Store = h.store
	p, ok := st.(store.Pauser)
	if !ok {
		t.Fatalf("%T keeps no pauses", h.store)
	}
	if _, err := p.Pause(ctx(t), store.Pause{Scope: store.ScopeKind, Name: "charge"}); err != nil {
		t.Fatal(err)
	}
	tk := h.enqueue(t, &pb.NewTask{Kind: "charge"})
	mail := h.enqueue(t, &pb.NewTask{Kind: "mail"})
	if c := h.claimOne(t, "w", "mail"); c.GetId() != mail.GetId() {
		t.Fatalf("claimed %v, want the mail task", c)
	}
	for _, kinds := range [][]string{{"charge"}, {"charge", "mail"}} {
		start := time.Now()
		r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: kinds, Limit: 1, Wait: dpb(300 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.GetTasks()) != 0 {
			t.Fatalf("a claim for kinds %v got %v while the kind is paused", kinds, r.GetTasks())
		}
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("a claim for kinds %v answered in %v: it should wait out its 300ms, not spin", kinds, took)
		}
	}
	if got := h.get(t, tk.GetId()); got.GetState() != pb.TaskState_TASK_STATE_READY || got.GetAttempt() != 0 {
		t.Errorf("the paused task is %v, want READY at attempt 0", got)
	}
	if _, err := p.Resume(ctx(t), store.ScopeKind, "charge"); err != nil {
		t.Fatal(err)
	}
	// The claim waits (up to 10s) for the task: the server reads the
	// pauses again within a second.
	if c := h.claimOne(t, "w", "charge"); c.GetId() != tk.GetId() {
		t.Errorf("claimed %v after the resume, want task %d", c, tk.GetId())
	}
}

// TestPausesThroughTheAPI: pause, list and resume through the API; a
// read-only token lists but cannot pause; a bad scope or name is
// INVALID_ARGUMENT naming the field.
func TestPausesThroughTheAPI(t *testing.T) {
	t.Parallel()
	const reader = "reader-token-0123456789"
	h := start(t, server.Config{Tokens: []server.Token{{Value: testToken}, {Value: reader, Role: server.RoleReadOnly}}}, testToken)
	r, err := h.tasks.Pause(ctx(t), &pb.PauseRequest{Scope: pb.PauseScope_PAUSE_SCOPE_QUEUE, Name: "mail"})
	if err != nil || r.GetPause().GetName() != "mail" || r.GetPause().GetSince() == nil || r.GetPause().GetWho() == "" {
		t.Fatalf("pause: %v, %v", r, err)
	}
	ro := pb.NewTasksServiceClient(dial(t, h.addr, reader))
	l, err := ro.Pauses(ctx(t), &pb.PausesRequest{})
	if err != nil || len(l.GetPauses()) != 1 || l.GetPauses()[0].GetScope() != pb.PauseScope_PAUSE_SCOPE_QUEUE {
		t.Fatalf("pauses with a read-only token: %v, %v", l, err)
	}
	_, err = ro.Pause(ctx(t), &pb.PauseRequest{Scope: pb.PauseScope_PAUSE_SCOPE_KIND, Name: "k"})
	wantCode(t, err, codes.PermissionDenied)
	_, err = h.tasks.Pause(ctx(t), &pb.PauseRequest{Name: "mail"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = h.tasks.Pause(ctx(t), &pb.PauseRequest{Scope: pb.PauseScope_PAUSE_SCOPE_TENANT})
	wantCode(t, err, codes.InvalidArgument)
	for _, want := range []bool{true, false} {
		res, err := h.tasks.Resume(ctx(t), &pb.ResumeRequest{Scope: pb.PauseScope_PAUSE_SCOPE_QUEUE, Name: "mail"})
		if err != nil || res.GetWasPaused() != want {
			t.Errorf("resume: %v, %v; want was_paused %v", res, err, want)
		}
	}
}
