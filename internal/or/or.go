// Package or fills in defaults: a setting left at zero, or set below
// zero where the setting's own check allows it, takes its default.
package or

import "cmp"

// Positive returns v when it is above zero, else def.
func Positive[T cmp.Ordered](v, def T) T {
	var zero T
	if v > zero {
		return v
	}
	return def
}
