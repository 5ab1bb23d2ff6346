package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestChannelNamesFitPgNotify: every schema's channels are at most 63
// bytes (pg_notify refuses a longer name), valid UTF-8, and the channels
// of two long schemas that share a prefix differ.
func TestChannelNamesFitPgNotify(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("s", 63)
	other := strings.Repeat("s", 62) + "t"
	accented := strings.Repeat("é", 31) // 62 bytes
	for _, s := range []string{"grit", long, other, accented} {
		for _, c := range []string{channelOf(s), cancelChannelOf(s)} {
			if len(c) > maxChannel || !utf8.ValidString(c) || !strings.HasPrefix(c, "grit_") {
				t.Errorf("schema %q: channel %q (%d bytes)", s, c, len(c))
			}
		}
	}
	if channelOf("grit") != "grit_grit_due" || cancelChannelOf("grit") != "grit_grit_cancel" {
		t.Errorf("a short schema's channels changed: %q, %q", channelOf("grit"), cancelChannelOf("grit"))
	}
	if cancelChannelOf(long) == cancelChannelOf(other) || channelOf(long) == channelOf(other) {
		t.Errorf("two long schemas share a channel: %q", cancelChannelOf(long))
	}
}
