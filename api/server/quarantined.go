package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/task"
)

// An operator's view of the quarantined items, and their actions: replay
// and drop go through internal/quarantine, as the CLI's, the dashboard's
// and the root Client's do, and are audited as the dead-letter actions
// are.

// ListQuarantined answers a page of up to page_size items, fewer when
// their JSON would pass Config.MaxAnswer; next_page_token continues it.
func (x *tasks) ListQuarantined(ctx context.Context, r *pb.ListQuarantinedRequest) (*pb.ListQuarantinedResponse, error) {
	const op = "list quarantined"
	f, err := listQuarantined(r)
	if err != nil {
		return nil, statusOf(op, err)
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there is a next page
	items, err := x.s.cfg.Store.ListQuarantined(ctx, f)
	if err != nil {
		return nil, statusOf(op, err)
	}
	n := min(len(items), limit)
	size := 0
	for i, it := range items[:n] {
		if size += len(it.Item) + len(it.Error); size > x.s.cfg.MaxAnswer && i > 0 {
			n = i
			break
		}
	}
	out := &pb.ListQuarantinedResponse{Items: make([]*pb.QuarantinedItem, n)}
	for i, it := range items[:n] {
		out.Items[i] = toQuarantined(it)
	}
	if n < len(items) {
		out.NextPageToken = pageToken(pagedQuarantined(r), items[n-1].ID)
	}
	return out, nil
}

func listQuarantined(r *pb.ListQuarantinedRequest) (task.QuarantineFilter, error) {
	f := task.QuarantineFilter{TaskID: r.GetTaskId(), Fingerprint: r.GetFingerprint()}
	size := int(r.GetPageSize())
	switch {
	case f.TaskID < 0:
		return f, bad("task_id", "%d: want a task id, or 0 for any task's", f.TaskID)
	case size < 0:
		return f, bad("page_size", "%d: want 1 to %d, or 0 for %d", size, maxList, defaultList)
	case size == 0:
		size = defaultList
	}
	if err := checkText("fingerprint", f.Fingerprint); err != nil {
		return f, err
	}
	f.Limit = min(size, maxList)
	var err error
	f.AfterID, err = readPageToken(pagedQuarantined(r))
	return f, err
}

func toQuarantined(it task.Quarantined) *pb.QuarantinedItem {
	return &pb.QuarantinedItem{Id: it.ID, TaskId: it.TaskID, Queue: it.Queue, Kind: it.Kind, Attempt: int32(it.Attempt),
		ReplayKind: it.ReplayKind, Item: it.Item, Error: it.Error, Fingerprint: it.Fingerprint, CreatedAt: ts(it.CreatedAt)}
}

func (x *tasks) QuarantineGroups(ctx context.Context, _ *pb.QuarantineGroupsRequest) (*pb.QuarantineGroupsResponse, error) {
	gs, err := x.s.cfg.Store.QuarantineGroups(ctx)
	if err != nil {
		return nil, statusOf("quarantine groups", err)
	}
	out := &pb.QuarantineGroupsResponse{Groups: make([]*pb.QuarantineGroup, len(gs))}
	for i, g := range gs {
		out.Groups[i] = &pb.QuarantineGroup{Fingerprint: g.Fingerprint, Count: int64(g.Count), FirstAt: ts(g.FirstAt), LastAt: ts(g.LastAt),
			Sample: g.Sample, SampleItem: g.SampleItem, Kinds: g.Kinds}
	}
	return out, nil
}

func (x *tasks) ReplayQuarantined(ctx context.Context, r *pb.ReplayQuarantinedRequest) (*pb.ReplayQuarantinedResponse, error) {
	const op = "replay quarantined"
	target, err := x.s.quarantineTarget(ctx, r.GetIds(), r.GetFingerprint())
	if err != nil {
		return nil, statusOf(op, err)
	}
	res, err := quarantine.Replay(ctx, x.s.cfg.Store, r.GetIds(), r.GetFingerprint())
	if len(res.Replayed) > 0 {
		x.s.cfg.Metrics.Enqueued(res.Replayed)
		x.s.wake.notify()
	}
	x.s.auditN(ctx, "replay", target, len(res.Replayed), refusedDetail(res))
	if err != nil {
		return nil, statusOf(op, err)
	}
	out := &pb.ReplayQuarantinedResponse{Tasks: make([]*pb.Task, len(res.Replayed)), Dropped: int64(res.Dropped)}
	for i, e := range res.Replayed {
		out.Tasks[i] = toTask(e.Task, false)
	}
	for _, e := range res.Refused {
		out.Refused = append(out.Refused, e.Error())
	}
	return out, nil
}

func (x *tasks) DropQuarantined(ctx context.Context, r *pb.DropQuarantinedRequest) (*pb.DropQuarantinedResponse, error) {
	const op = "drop quarantined"
	target, err := x.s.quarantineTarget(ctx, r.GetIds(), r.GetFingerprint())
	if err != nil {
		return nil, statusOf(op, err)
	}
	res, err := quarantine.Drop(ctx, x.s.cfg.Store, r.GetIds(), r.GetFingerprint())
	x.s.auditN(ctx, "drop", target, res.Dropped, "")
	if err != nil {
		return nil, statusOf(op, err)
	}
	return &pb.DropQuarantinedResponse{Dropped: int64(res.Dropped)}, nil
}

// quarantineTarget checks how a request names items (quarantine.Check),
// refuses ids that name no quarantined item (a mistyped id must not go
// unnoticed), and says what the items are, for the audit log.
func (s *Server) quarantineTarget(ctx context.Context, ids []int64, fingerprint string) (string, error) {
	if err := quarantine.Check(ids, fingerprint); err != nil {
		field := "ids"
		if (len(ids) == 0) == (fingerprint == "") { // both, or neither
			field = "ids, fingerprint"
		}
		return "", bad(field, "%s", strings.TrimPrefix(err.Error(), task.ErrInvalid.Error()+": "))
	}
	if fingerprint != "" {
		if err := checkText("fingerprint", fingerprint); err != nil {
			return "", err
		}
		return "quarantined items with fingerprint " + fingerprint, nil
	}
	unknown, err := quarantine.Unknown(ctx, s.cfg.Store, ids)
	if err != nil {
		return "", err
	}
	if len(unknown) > 0 {
		return "", bad("ids", "%s: no quarantined item has it (never set aside, or replayed or dropped since): ListQuarantined lists those there are; nothing was done", idList(unknown))
	}
	return "quarantined items " + idList(ids), nil
}

// idList writes ids for a message, the first few of many.
func idList(ids []int64) string {
	const most = 10
	var b strings.Builder
	for i, id := range ids[:min(len(ids), most)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	if len(ids) > most {
		fmt.Fprintf(&b, "… (%d ids)", len(ids))
	}
	return b.String()
}

// refusedDetail is what a replay refused, for the audit log: how many,
// and the first's reason.
func refusedDetail(r quarantine.Result) string {
	if len(r.Refused) == 0 {
		return ""
	}
	return fmt.Sprintf("refused %d, the first: %v", len(r.Refused), r.Refused[0])
}
