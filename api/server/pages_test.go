package server

import (
	"testing"

	pb "github.com/grit-run/grit/api/gritv1"
)

// FuzzPageToken: a token is read back as written, by List and by
// ListQuarantined, and whatever else comes is refused without a panic or
// an id that is not positive; a List's token does not page a
// ListQuarantined with other filters.
func FuzzPageToken(f *testing.F) {
	f.Add(int64(1), "k", "", "")
	f.Add(int64(1<<40), "", "q", "AQEB")
	f.Fuzz(func(t *testing.T, after int64, kind, queue, tok string) {
		r := &pb.ListRequest{Kind: kind, Queue: queue}
		q := &pb.ListQuarantinedRequest{Fingerprint: kind + "x"}
		if after > 0 && after <= 1<<62 {
			r.PageToken, q.PageToken = pageToken(pagedList(r), after), pageToken(pagedQuarantined(q), after)
			if got, err := readPageToken(pagedList(r)); err != nil || got != after {
				t.Fatalf("token of %d read as %d (%v)", after, got, err)
			}
			if got, err := readPageToken(pagedQuarantined(q)); err != nil || got != after {
				t.Fatalf("ListQuarantined's token of %d read as %d (%v)", after, got, err)
			}
			q.PageToken = r.PageToken
			if _, err := readPageToken(pagedQuarantined(q)); err == nil {
				t.Fatalf("List's token %q pages a ListQuarantined with other filters", r.PageToken)
			}
		}
		r.PageToken, q.PageToken = tok, tok
		if got, err := readPageToken(pagedList(r)); err == nil && tok != "" && got <= 0 {
			t.Fatalf("token %q read as %d", tok, got)
		}
		if got, err := readPageToken(pagedQuarantined(q)); err == nil && tok != "" && got <= 0 {
			t.Fatalf("ListQuarantined's token %q read as %d", tok, got)
		}
	})
}
