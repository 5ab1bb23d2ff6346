package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/batch"
)

// Reported is what the server made of a result: the task after it
// (without its args and last error) and, for a failure, the decision.
type Reported struct {
	Task     *gritv1.Task
	Decision gritv1.Decision
}

// Report sends worker's results in one Report call and returns the
// server's answers, one per result in order: each recorded, or refused
// with its own status (ReportError turns one into an error). The error is
// the call's: nothing was recorded.
func (c *Client) Report(ctx context.Context, worker string, rs []*gritv1.Result) ([]*gritv1.ReportAnswer, error) {
	resp, err := c.workers.Report(ctx, &gritv1.ReportRequest{WorkerId: worker, Results: rs})
	if err != nil {
		return nil, fmt.Errorf("client: report %d results of worker %s: %w", len(rs), worker, err)
	}
	if len(resp.GetAnswers()) != len(rs) {
		return nil, fmt.Errorf("client: report %d results of worker %s: the server answered %d", len(rs), worker, len(resp.GetAnswers()))
	}
	return resp.GetAnswers(), nil
}

// ReportError is the error of a refused answer (a gRPC status error, its
// code for Code), nil for a recorded one.
func ReportError(a *gritv1.ReportAnswer) error {
	if a.GetStatus() == nil {
		return nil
	}
	return status.ErrorProto(a.GetStatus())
}

// SendResult buffers a result of worker's for a batched Report and
// returns its future: what the server made of it, or why it was not
// recorded (a refusal's status error, FAILED_PRECONDITION for a lease the
// worker lost). The results that many goroutines send go out together,
// at ReportBatchSize results or ReportInterval after the first, as Send's
// tasks do (in several reports of at most 8 MiB each when their outputs
// are large); a report that fails as a whole with DEADLINE_EXCEEDED,
// UNAVAILABLE or INTERNAL is sent again (a result recorded by the first
// answers OK).
func (c *Client) SendResult(ctx context.Context, worker string, r *gritv1.Result) *batch.Future[Reported] {
	return c.reports.Send(ctx, workerResult{worker, r})
}

type workerResult struct {
	worker string
	r      *gritv1.Result
}

// flushReports sends a batch of results in one Report per worker (one,
// for a process that is one worker).
func (c *Client) flushReports(ctx context.Context, items []workerResult) ([]Reported, error) {
	out := make([]Reported, len(items))
	var refused batch.ItemErrors
	byWorker := map[string][]int{}
	var order []string
	for i, it := range items {
		if _, ok := byWorker[it.worker]; !ok {
			order = append(order, it.worker)
		}
		byWorker[it.worker] = append(byWorker[it.worker], i)
	}
	for _, w := range order {
		for _, idx := range bySize(items, byWorker[w], maxReportBytes) {
			rs := make([]*gritv1.Result, len(idx))
			for j, i := range idx {
				rs[j] = items[i].r
			}
			as, err := c.Report(ctx, w, rs)
			if err != nil {
				return nil, err
			}
			for j, a := range as {
				out[idx[j]] = Reported{Task: a.GetTask(), Decision: a.GetDecision()}
				if err := ReportError(a); err != nil {
					if refused == nil {
						refused = make(batch.ItemErrors, len(items))
					}
					refused[idx[j]] = fmt.Errorf("client: result of task %d: %w", items[idx[j]].r.GetTaskId(), err)
				}
			}
		}
	}
	if refused != nil {
		return out, refused
	}
	return out, nil
}

// maxReportBytes bounds a Report the client sends, well within the
// server's default message limit (16 MiB): a result's message and output
// may be 64 KiB each, so a full batch of large ones would be refused
// whole.
const maxReportBytes = 8 << 20

// bySize splits the items idx names into runs, in order, whose results
// take at most max bytes on the wire together; a result larger than max
// goes alone, for the server to judge.
func bySize(items []workerResult, idx []int, max int) [][]int {
	var out [][]int
	size := 0
	for _, i := range idx {
		n := proto.Size(items[i].r) + 8 // its tag and length, generously
		if len(out) == 0 || size+n > max {
			out, size = append(out, nil), 0
		}
		out[len(out)-1] = append(out[len(out)-1], i)
		size += n
	}
	return out
}
