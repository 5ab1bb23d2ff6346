package server

import (
	"fmt"
	"math"
	"strconv"
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
// It also refuses, without decoding it, a request larger than limit
// (Config.MaxMessage), which gRPC reads up to twice that (readLimit).
//
// Neither refusal is returned to gRPC: gRPC answers any codec error
// INTERNAL, as if the server had failed, and it answers a request over
// its own receive limit RESOURCE_EXHAUSTED, which retry policies retry,
// before the method or an interceptor can say otherwise. The codec keeps
// the refusal in refused, keyed by the (reset) message, and the unary
// interceptor, which gets that message next, answers it INVALID_ARGUMENT
// (answerRefused). Only grit's own requests go this way: all are unary, so the
// entry is always taken.
type countingCodec struct {
	max     int
	limit   int       // 0: no limit of the codec's own
	refused *sync.Map // proto.Message → error (malformed or oversize)
}

// oversize is the refusal of a request of n bytes, over the limit.
type oversize struct{ n int }

func (o oversize) Error() string { return fmt.Sprintf("%d bytes", o.n) }

// readLimit is the receive limit gRPC reads requests up to, for a
// Config.MaxMessage of limit: twice it, so that a request up to twice
// the limit is answered by the codec, INVALID_ARGUMENT with the reason
// MESSAGE_TOO_LARGE, while gRPC still refuses a larger one unread. A
// request that gRPC refuses is answered RESOURCE_EXHAUSTED, without an
// ErrorInfo.
func readLimit(limit int) int {
	return int(min(2*int64(limit), math.MaxInt32))
}

var protoCodec = encoding.GetCodecV2(grpcproto.Name)

func (countingCodec) Name() string { return grpcproto.Name }

func (c countingCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (c countingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	md := m.ProtoReflect().Descriptor()
	ours := c.refused != nil && md.ParentFile().Package() == pb.File_grit_v1_grit_proto.Package()
	if n := data.Len(); ours && c.limit > 0 && n > c.limit {
		proto.Reset(m)
		c.refused.Store(m, oversize{n})
		return nil
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	err := proto.Unmarshal(cutItems(buf.ReadOnlyData(), md, c.max+1), m)
	if err != nil && ours {
		proto.Reset(m)
		c.refused.Store(m, err)
		return nil
	}
	return err
}

// answerRefused answers a request the codec refused to decode (see
// countingCodec): INVALID_ARGUMENT, saying why; nil for one it decoded.
func answerRefused(refused *sync.Map, method string, req any, limit int) error {
	err, ok := refused.LoadAndDelete(req)
	if !ok {
		return nil
	}
	if o, ok := err.(oversize); ok {
		return refuse(method, codes.InvalidArgument, pb.ReasonMessageTooLarge,
			fmt.Sprintf("%s: the request is %d bytes, over the server's limit of %d: split it (the Go client splits batches by GRIT_MAX_BATCH_SIZE), or raise the server's --max-message", method, o.n, limit),
			map[string]string{"limit": strconv.Itoa(limit), "size": strconv.Itoa(o.n), "method": method})
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
		fd, n, c := item(fields, rest)
		if n < 0 {
			break
		}
		if fd != nil {
			counts[fd.Index()] += c
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
		fd, n, c := item(fields, rest)
		if n < 0 {
			return append(out, rest...)
		}
		if fd != nil {
			left := keep - counts[fd.Index()]
			counts[fd.Index()] += min(c, max(left, 0))
			switch {
			case left <= 0:
				rest = rest[n:]
				continue
			case c > left: // numbers packed in one record: keep the first left
				out = appendPacked(out, fd, rest[:n], left)
				rest = rest[n:]
				continue
			}
		}
		out = append(out, rest[:n]...)
		rest = rest[n:]
	}
	return out
}

// item is the length (tag included) of the field b starts with; when it
// holds items of a repeated field, that field and how many: one for a
// message, a string, bytes or a number, and as many as it packs for
// packed numbers (maps, whose entries with one key are one item, the API
// has none). A negative length if it is malformed. A record whose wire
// type is not its field's is an unknown field to proto.Unmarshal, not an
// item: it is kept, and not counted.
func item(fields protoreflect.FieldDescriptors, b []byte) (protoreflect.FieldDescriptor, int, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return nil, n, 0
	}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return nil, m, 0
	}
	fd := fields.ByNumber(num)
	if fd == nil || fd.Cardinality() != protoreflect.Repeated || fd.IsMap() {
		return nil, n + m, 0
	}
	switch k := fd.Kind(); {
	case k == protoreflect.MessageKind || k == protoreflect.StringKind || k == protoreflect.BytesKind:
		if typ == protowire.BytesType {
			return fd, n + m, 1
		}
	case typ == protowire.BytesType: // packed numbers
		v, _ := protowire.ConsumeBytes(b[n:])
		return fd, n + m, packedCount(k, v, -1)
	case typ == numberType(k):
		return fd, n + m, 1
	}
	return nil, n + m, 0
}

// numberType is the wire type of a number of kind k, unpacked.
func numberType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// packedCount counts the numbers of kind k packed in v, up to most (-1:
// all), and answers how many, or, with most set, the bytes they take. A
// malformed number ends the count, for proto.Unmarshal to refuse.
func packedCount(k protoreflect.Kind, v []byte, most int) int {
	size := 0
	switch numberType(k) {
	case protowire.Fixed32Type:
		size = 4
	case protowire.Fixed64Type:
		size = 8
	}
	count, at := 0, 0
	for at < len(v) && count != most {
		w := size
		if size == 0 {
			if _, w = protowire.ConsumeVarint(v[at:]); w < 0 {
				break
			}
		}
		if at+w > len(v) {
			break
		}
		at, count = at+w, count+1
	}
	if most >= 0 {
		return at
	}
	return count
}

// appendPacked appends to out the record rec of packed numbers of fd,
// with its first keep numbers only.
func appendPacked(out []byte, fd protoreflect.FieldDescriptor, rec []byte, keep int) []byte {
	_, _, n := protowire.ConsumeTag(rec)
	v, _ := protowire.ConsumeBytes(rec[n:])
	out = protowire.AppendTag(out, fd.Number(), protowire.BytesType)
	return protowire.AppendBytes(out, v[:packedCount(fd.Kind(), v, keep)])
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
