package server

import "testing"

// TestDefaultMaxMessage: the receive limit follows the payload and batch
// limits, within 16 MiB, and always reads one payload over its limit.
func TestDefaultMaxMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ payload, batch, want int }{
		{DefaultMaxPayload, DefaultMaxBatch, DefaultMaxMessage},
		{64 << 10, 100, 100 * (64<<10 + itemRoom)},
		{4 << 10, 10, 4<<10 + 1<<20},
		{32 << 20, 1000, 33 << 20},
		{1 << 40, 1 << 40, 1<<40 + 1<<20},
	} {
		if got := defaultMaxMessage(tt.payload, tt.batch); got != tt.want {
			t.Errorf("payload %d, batch %d: %d, want %d", tt.payload, tt.batch, got, tt.want)
		}
	}
}
