package server

import (
	"testing"

	pb "github.com/grit-run/grit/api/gritv1"
)

// FuzzPageToken: a token is read back as written, and whatever else comes
// is refused without a panic or an id that is not positive.
func FuzzPageToken(f *testing.F) {
	f.Add(int64(1), "k", "", "")
	f.Add(int64(1<<40), "", "q", "AQEB")
	f.Fuzz(func(t *testing.T, after int64, kind, queue, tok string) {
		r := &pb.ListRequest{Kind: kind, Queue: queue}
		if after > 0 && after <= 1<<62 {
			r.PageToken = pageToken(r, after)
			if got, err := readPageToken(r); err != nil || got != after {
				t.Fatalf("token of %d read as %d (%v)", after, got, err)
			}
		}
		r.PageToken = tok
		if got, err := readPageToken(r); err == nil && tok != "" && got <= 0 {
			t.Fatalf("token %q read as %d", tok, got)
		}
	})
}
