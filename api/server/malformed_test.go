package server_test

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
)

// rawCodec sends the bytes it is given as they are: a client that does not
// speak protobuf.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// TestMalformedRequestIsInvalidArgument: bytes that are not the request
// in protobuf's wire format are the caller's mistake: INVALID_ARGUMENT,
// saying so, not INTERNAL; and the server answers well-formed calls after.
func TestMalformedRequestIsInvalidArgument(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for _, b := range [][]byte{
		{0xff, 0xff, 0xff},       // a field number of 0x1fffff… with no end
		{0x0a, 0x05, 'a'},        // a string field longer than the message
		{0x08, 0x80, 0x80, 0x80}, // a varint with no end
	} {
		var out []byte
		err := h.conn.Invoke(ctx(t), pb.TasksService_Get_FullMethodName, &b, &out, grpc.ForceCodecV2(rawCodec{}))
		wantCode(t, err, codes.InvalidArgument, "wire format", "GetRequest")
	}
	h.enqueue(t, &pb.NewTask{Kind: "k"})
	if g := h.get(t, 1); g.GetKind() != "k" {
		t.Fatalf("after malformed calls: %v", g)
	}
}
