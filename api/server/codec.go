package server

import (
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/grit-run/grit/api/gritv1"
)

// countingCodec is gRPC's proto codec, but it counts the items of a
// request's repeated fields on the wire before decoding it, and decodes
// no more than max+1 items of any of them. A message within the receive
// limit can still hold millions of tiny items (a one-letter task is 5
// bytes on the wire and some 250 in memory): decoded whole, 16 MiB of
// them take the server near 900 MiB only to be refused for the batch
// limit. With them cut, the request still has more items than the limit,
// and checkItems refuses it.
//
// Only the request's own fields are counted: none of the API's requests
// nests a repeated field in an item.
//
// A request that is not its message in protobuf's wire format is not
// refused here: gRPC answers any codec error INTERNAL, as if the server
// had failed. The codec keeps the error in malformed, keyed by the
// (reset) message, and the unary interceptor, which gets that message
// next, answers INVALID_ARGUMENT (refuseMalformed). Only grit's own
// requests go this way: all are unary, so the entry is always taken.
type countingCodec struct {
	max       int
	malformed *sync.Map // proto.Message → error
}

var protoCodec = encoding.GetCodecV2(grpcproto.Name)

func (countingCodec) Name() string { return grpcproto.Name }

func (c countingCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	md := m.ProtoReflect().Descriptor()
	err := proto.Unmarshal(cutItems(buf.ReadOnlyData(), md, c.max+1), m)
	if err != nil && c.malformed != nil && md.ParentFile().Package() == pb.File_grit_v1_grit_proto.Package() {
		proto.Reset(m)
		c.malformed.Store(m, err)
		return nil
	}
	return err
}

// refuseMalformed answers a request the codec could not decode
// INVALID_ARGUMENT, saying so; nil for one it decoded.
func refuseMalformed(malformed *sync.Map, method string, req any) error {
	err, ok := malformed.LoadAndDelete(req)
	if !ok {
		return nil
	}
	return refuse(method, codes.InvalidArgument, pb.ReasonInvalidArgument,
		fmt.Sprintf("%s: the request is not a %T in protobuf's wire format (%v): send what the generated code of grit.proto encodes", method, req, err), nil)
}

// cutItems returns b, the wire form of a message of type md, without the
// items of each repeated field past the first keep; b itself when none has
// more. A malformed field and what follows it are kept as they are, for
// proto.Unmarshal to refuse, but the items before it are cut all the same:
// one bad byte at the end must not have millions decoded first.
func cutItems(b []byte, md protoreflect.MessageDescriptor, keep int) []byte {
	fields := md.Fields()
	counts := make([]int, fields.Len())
	over := false
	for rest := b; len(rest) > 0 && !over; {
		fd, n := item(fields, rest)
		if n < 0 {
			break
		}
		if fd != nil {
			counts[fd.Index()]++
			over = counts[fd.Index()] > keep
		}
		rest = rest[n:]
	}
	if !over {
		return b
	}
	out := make([]byte, 0, len(b))
	clear(counts)
	for rest := b; len(rest) > 0; {
		fd, n := item(fields, rest)
		if n < 0 {
			return append(out, rest...)
		}
		if fd != nil {
			if counts[fd.Index()]++; counts[fd.Index()] > keep {
				rest = rest[n:]
				continue
			}
		}
		out = append(out, rest[:n]...)
		rest = rest[n:]
	}
	return out
}

// item is the length (tag included) of the field b starts with, and its
// descriptor when it is an item of a repeated field of messages, strings
// or bytes (the API has no repeated numbers, nor maps, whose entries
// with one key are one item); a negative length if it is
// malformed. A record whose wire type is not its field's is an unknown
// field to proto.Unmarshal, not an item: it is kept, and not counted.
func item(fields protoreflect.FieldDescriptors, b []byte) (protoreflect.FieldDescriptor, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return nil, n
	}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return nil, m
	}
	fd := fields.ByNumber(num)
	if fd == nil || fd.Cardinality() != protoreflect.Repeated || fd.IsMap() || typ != protowire.BytesType {
		return nil, n + m
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.StringKind, protoreflect.BytesKind:
		return fd, n + m
	}
	return nil, n + m
}

// checkItems refuses a request with a repeated field of more than max
// items, as countingCodec left it (max+1 at most): whatever its field,
// and before its method's own validation, so that a cut request is never
// served as if it were whole.
func checkItems(method string, req any, max int) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	var err error
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		n := 0
		switch {
		case fd.IsList():
			n = v.List().Len()
		case fd.IsMap():
			n = v.Map().Len()
		}
		if n > max {
			err = statusOf(method, over(pb.ReasonBatchTooLarge, string(fd.Name()), "more than the limit of %d items: split the batch, or raise the server's limit (GRIT_MAX_BATCH)", max))
		}
		return err == nil
	})
	return err
}
