package server

import (
	"bytes"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
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

// TestCutPackedNumbers: a repeated number keeps its first items, packed
// in one record (as proto3 writes them) or one a record, or both; so a
// request of millions of tiny ids is never decoded whole.
func TestCutPackedNumbers(t *testing.T) {
	drop := &pb.DropQuarantinedRequest{Ids: []int64{1, 300, 70000, 4, 5}, Fingerprint: "f"}
	packed, err := proto.Marshal(drop)
	if err != nil {
		t.Fatal(err)
	}
	md := drop.ProtoReflect().Descriptor()
	if got := cutItems(packed, md, 5); !bytes.Equal(got, packed) {
		t.Errorf("no field over: the wire changed")
	}
	var unpacked []byte
	for _, id := range drop.Ids {
		unpacked = protowire.AppendTag(unpacked, 1, protowire.VarintType)
		unpacked = protowire.AppendVarint(unpacked, uint64(id))
	}
	unpacked = protowire.AppendTag(unpacked, 2, protowire.BytesType)
	unpacked = protowire.AppendString(unpacked, "f")
	mixed := append(append([]byte{}, packed...), unpacked...) // ten ids
	for name, c := range map[string]struct {
		wire []byte
		keep int
		want []int64
	}{
		"packed":   {packed, 3, []int64{1, 300, 70000}},
		"unpacked": {unpacked, 2, []int64{1, 300}},
		"mixed":    {mixed, 7, []int64{1, 300, 70000, 4, 5, 1, 300}},
		"none":     {packed, 0, nil},
	} {
		var got pb.DropQuarantinedRequest
		if err := proto.Unmarshal(cutItems(c.wire, md, c.keep), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got.Ids, c.want) || got.Fingerprint != "f" {
			t.Errorf("%s cut to %d: %v, want ids %v", name, c.keep, &got, c.want)
		}
	}
}

// FuzzCutPackedNumbers: as FuzzCutItems, for a request of numbers.
func FuzzCutPackedNumbers(f *testing.F) {
	for _, m := range []proto.Message{
		&pb.DropQuarantinedRequest{Ids: []int64{1, 2, 3, 1 << 40}, Fingerprint: "x"},
		&pb.DropQuarantinedRequest{Ids: []int64{-1, 0, 7}},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b, 2)
	}
	f.Fuzz(func(t *testing.T, b []byte, keep int) {
		keep = max(keep%8, 0)
		var whole pb.DropQuarantinedRequest
		if proto.Unmarshal(b, &whole) != nil {
			return
		}
		var cut pb.DropQuarantinedRequest
		if err := proto.Unmarshal(cutItems(b, whole.ProtoReflect().Descriptor(), keep), &cut); err != nil {
			t.Fatalf("the cut does not decode: %v", err)
		}
		whole.Ids = whole.Ids[:min(len(whole.Ids), keep)]
		if !proto.Equal(&whole, &cut) {
			t.Fatalf("cut to %d: %v, want %v", keep, &cut, &whole)
		}
	})
}
