package proc

import (
	"bytes"
	"sync"
)

// tailBuffer is an io.Writer that keeps the last max bytes written to it, in
// a ring, so a task that writes gigabytes costs max bytes of memory. It keeps
// one byte more than it returns, to tell whether the kept bytes start at a
// line boundary. It is safe for concurrent use.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte // grows to max+1, then wraps
	head int    // once full: index of the oldest byte, where the next write goes
	full bool
}

func newTailBuffer(max int) *tailBuffer {
	return &tailBuffer{max: max}
}

// Write keeps the end of p; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	size := t.max + 1
	if len(p) >= size {
		p = p[len(p)-size:]
		t.buf = append(t.buf[:0], p...)
		t.head, t.full = 0, true
		return n, nil
	}
	if !t.full {
		k := min(len(p), size-len(t.buf))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
		t.full = len(t.buf) == size
	}
	for len(p) > 0 {
		k := copy(t.buf[t.head:], p)
		p = p[k:]
		t.head = (t.head + k) % size
	}
	return n, nil
}

// Bytes returns a copy of the last max bytes written, or all of them if
// fewer were. When older bytes were dropped, the result starts after the
// first newline in it, so that it holds whole lines, unless that would leave
// nothing (a single line longer than max is kept, cut).
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		return bytes.Clone(t.buf)
	}
	ring := make([]byte, 0, len(t.buf))
	ring = append(ring, t.buf[t.head:]...)
	ring = append(ring, t.buf[:t.head]...)
	before, kept := ring[0], ring[1:]
	if before == '\n' {
		return kept
	}
	if i := bytes.IndexByte(kept, '\n'); i >= 0 && i < len(kept)-1 {
		return kept[i+1:]
	}
	return kept
}
