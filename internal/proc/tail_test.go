package proc

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"empty", 8, nil, ""},
		{"under max", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly max", 8, []string{"abcd", "efgh"}, "abcdefgh"},
		{"cut after first newline", 8, []string{"aa\nbb\ncc\n"}, "bb\ncc\n"},
		{"window starts on a line", 6, []string{"aa\nbb\ncc\n"}, "bb\ncc\n"},
		{"no newline keeps the cut line", 4, []string{"abcdefgh"}, "efgh"},
		{"only a final newline keeps the cut line", 4, []string{"abcdefg\n"}, "efg\n"},
		{"unterminated last line", 8, []string{"one\ntwo\nthree"}, "three"},
		{"many small writes wrap", 5, strings.Split("a\nb\nc\nd\ne\nf\n", ""), "e\nf\n"},
		{"write larger than max", 4, []string{"x", "0123456789"}, "6789"},
		{"large write then small", 4, []string{"0123456789", "ab"}, "89ab"},
		{"fill exactly then wrap", 3, []string{"abcd", "e"}, "cde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := newTailBuffer(tt.max)
			for _, w := range tt.writes {
				if n, err := tb.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(tb.Bytes()); got != tt.want {
				t.Errorf("Bytes() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTailBufferMatchesNaive checks the ring against keeping everything and
// slicing, for every split of the same output into writes.
func TestTailBufferMatchesNaive(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for i := range 40 {
		fmt.Fprintf(&all, "line %d %s\n", i, strings.Repeat("x", i%7))
	}
	data := all.Bytes()
	for _, max := range []int{1, 7, 16, 64, len(data) - 1, len(data), len(data) + 1} {
		for _, chunk := range []int{1, 3, 16, 100, len(data)} {
			tb := newTailBuffer(max)
			for rest := data; len(rest) > 0; {
				n := min(chunk, len(rest))
				tb.Write(rest[:n])
				rest = rest[n:]
			}
			if got, want := tb.Bytes(), naiveTail(data, max); !bytes.Equal(got, want) {
				t.Errorf("max %d, chunk %d: got %q, want %q", max, chunk, got, want)
			}
		}
	}
}

func naiveTail(data []byte, max int) []byte {
	if len(data) <= max {
		return data
	}
	kept := data[len(data)-max:]
	if data[len(data)-max-1] == '\n' {
		return kept
	}
	if i := bytes.IndexByte(kept, '\n'); i >= 0 && i < len(kept)-1 {
		return kept[i+1:]
	}
	return kept
}

func TestTailBufferBytesIsACopy(t *testing.T) {
	t.Parallel()
	tb := newTailBuffer(4)
	tb.Write([]byte("abc"))
	got := tb.Bytes()
	got[0] = 'z'
	if s := string(tb.Bytes()); s != "abc" {
		t.Errorf("Bytes() after mutating a previous result = %q, want %q", s, "abc")
	}
}

func TestTailBufferConcurrent(t *testing.T) {
	t.Parallel()
	tb := newTailBuffer(64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				tb.Write([]byte("0123456789\n"))
				_ = tb.Bytes()
			}
		})
	}
	wg.Wait()
	if got := string(tb.Bytes()); got != strings.Repeat("0123456789\n", 5) {
		t.Errorf("Bytes() = %q, want 5 whole lines", got)
	}
}

func BenchmarkTailBuffer(b *testing.B) {
	line := []byte(strings.Repeat("x", 79) + "\n")
	tb := newTailBuffer(DefaultTailBytes)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		tb.Write(line)
	}
}
