package server

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/grit-run/grit/api/gritv1"
)

// TestCutItems: a request's repeated fields keep their first items, its
// other fields all of theirs, wherever they lie on the wire.
func TestCutItems(t *testing.T) {
	t.Parallel()
	claim := &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"a", "b", "c", "d"}, Queues: []string{"q"}, Limit: 7, Host: "h"}
	b, err := proto.Marshal(claim)
	if err != nil {
		t.Fatal(err)
	}
	md := claim.ProtoReflect().Descriptor()
	if got := cutItems(b, md, 4); !bytes.Equal(got, b) {
		t.Errorf("no field over: the wire changed")
	}
	var got pb.ClaimRequest
	if err := proto.Unmarshal(cutItems(b, md, 2), &got); err != nil {
		t.Fatal(err)
	}
	want := &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"a", "b"}, Queues: []string{"q"}, Limit: 7, Host: "h"}
	if !proto.Equal(&got, want) {
		t.Errorf("cut to 2: %v, want %v", &got, want)
	}
	if bad := []byte{0x0a, 0x7f, 'a'}; !bytes.Equal(cutItems(bad, md, 0), bad) {
		t.Errorf("a malformed message is not left as it is for proto.Unmarshal to refuse")
	}
	// Items before a malformed end are cut all the same, the end kept.
	one := []byte{0x0a, 3, 0x0a, 1, 'a'}
	batch := append(bytes.Repeat(one, 5), 0x0a, 0x7f)
	if got, want := cutItems(batch, (&pb.EnqueueBatchRequest{}).ProtoReflect().Descriptor(), 2), append(bytes.Repeat(one, 2), 0x0a, 0x7f); !bytes.Equal(got, want) {
		t.Errorf("five items and a malformed end, cut to 2: % x, want % x", got, want)
	}
}

// FuzzCutItems: whatever the wire, a message that decodes decodes after
// the cut too, with each repeated field's first keep items and the rest
// as they were.
func FuzzCutItems(f *testing.F) {
	for _, m := range []proto.Message{
		&pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{{Kind: "a"}, {Kind: "b", Args: []byte("{}")}, {Kind: "c"}}},
		&pb.ClaimRequest{WorkerId: "w", Kinds: []string{"a", "b", "c"}, Queues: []string{"q", "r"}, Limit: 2},
		&pb.HeartbeatRequest{WorkerId: "w", Leases: []*pb.Lease{{}, {}, {}}},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b, 1)
	}
	f.Fuzz(func(t *testing.T, b []byte, keep int) {
		keep = max(keep%8, 0)
		var whole pb.ClaimRequest
		if proto.Unmarshal(b, &whole) != nil {
			return
		}
		var cut pb.ClaimRequest
		if err := proto.Unmarshal(cutItems(b, whole.ProtoReflect().Descriptor(), keep), &cut); err != nil {
			t.Fatalf("the cut does not decode: %v", err)
		}
		whole.Kinds = whole.Kinds[:min(len(whole.Kinds), keep)]
		whole.Queues = whole.Queues[:min(len(whole.Queues), keep)]
		if !proto.Equal(&whole, &cut) {
			t.Fatalf("cut to %d: %v, want %v", keep, &cut, &whole)
		}
	})
}
