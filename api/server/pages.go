package server

import (
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"

	pb "github.com/grit-run/grit/api/gritv1"
)

// List and ListQuarantined page by AIP-158: page_size, an opaque
// page_token, next_page_token. A token holds the last id of the page
// before and a hash of the query it continues (List's run, states, kind,
// queue; ListQuarantined's task and fingerprint), so that a token sent
// with other filters is refused instead of paging a different list from
// the middle. It is not a secret and not signed: a client that forges one
// gets a page of what it could list anyway.

// tokenVersion starts every token this server writes; a later format
// takes another.
const tokenVersion = 1

// paged is a request that pages: its token, a hash of the filters its
// pages keep, and their names, for the message that refuses a token of
// other filters.
type paged struct {
	token   string
	hash    uint64
	filters string
}

func pagedList(r *pb.ListRequest) paged {
	return paged{token: r.GetPageToken(), hash: queryHash(r), filters: "run_id, states, kind, queue"}
}

func pagedQuarantined(r *pb.ListQuarantinedRequest) paged {
	h := fnv.New64a()
	b := strconv.AppendInt(nil, r.GetTaskId(), 10)
	b = append(b, 0)
	b = append(b, r.GetFingerprint()...)
	h.Write(b)
	return paged{token: r.GetPageToken(), hash: h.Sum64(), filters: "task_id, fingerprint"}
}

// pageToken is the token of the page after the item afterID, for p's
// query.
func pageToken(p paged, afterID int64) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64)
	b = append(b, tokenVersion)
	b = binary.AppendUvarint(b, uint64(afterID))
	b = binary.AppendUvarint(b, p.hash)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readPageToken is the id p's token continues after; 0 for none. A
// token this server did not write, or one of another query, is refused,
// naming the field.
func readPageToken(p paged) (int64, error) {
	tok := p.token
	if tok == "" {
		return 0, nil
	}
	const fix = "pass the next_page_token of the previous page unchanged, or none for the first page"
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 || b[0] != tokenVersion {
		return 0, bad("page_token", "%s is not a token this server gave: %s", quote(tok), fix)
	}
	after, n := binary.Uvarint(b[1:])
	if n <= 0 || after == 0 || after > 1<<62 {
		return 0, bad("page_token", "%s is not a token this server gave: %s", quote(tok), fix)
	}
	hash, m := binary.Uvarint(b[1+n:])
	if m <= 0 || 1+n+m != len(b) {
		return 0, bad("page_token", "%s is not a token this server gave: %s", quote(tok), fix)
	}
	if hash != p.hash {
		return 0, bad("page_token", "continues a list with other filters (%s): keep the first page's filters while paging, or start again without a token", p.filters)
	}
	return int64(after), nil
}

// queryHash is a hash of what a List's pages must keep: its filters, not
// its page size or view.
func queryHash(r *pb.ListRequest) uint64 {
	h := fnv.New64a()
	states := slices.Clone(r.GetStates())
	slices.Sort(states)
	b := strconv.AppendInt(nil, r.GetRunId(), 10)
	for _, s := range states {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(s), 10)
	}
	b = append(b, 0)
	b = append(b, r.GetKind()...)
	b = append(b, 0)
	b = append(b, r.GetQueue()...)
	h.Write(b)
	return h.Sum64()
}
