// Package suggest finds the word a user most likely meant: the "did you
// mean" of task files' keys and the command line's arguments.
package suggest

import "strings"

// Closest returns the candidate nearest to s, if it is within an edit
// distance of 2 (and nearer than s is long, so that "x" does not suggest
// "max"). Case is ignored in s; the first of equally near candidates
// wins.
func Closest(s string, candidates []string) (string, bool) {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), c); d < bestD && d < len(s) {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b)) // too long to be a typo
	}
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
