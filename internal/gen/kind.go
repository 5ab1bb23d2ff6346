package gen

import (
	"strings"
	"unicode"
)

// KindOf is the kind of a handler without a //grit:handler directive: its
// function's name in snake case. A word starts at an upper-case letter
// that follows a lower-case letter or a digit, or that begins a run of
// upper-case letters followed by a lower-case one; digits stay with what
// they follow:
//
//	ChargeCard  charge_card
//	sendEmail   send_email
//	HTTPFetch   http_fetch
//	ParseV2     parse_v2
//	Resize2x    resize2x
//	charge      charge
func KindOf(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			next := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && next {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
