package sqlite

import "strings"

// maxValuesRows caps the rows of one VALUES list: with the widest list
// (finishCols) it stays far below SQLite's 32766 parameters.
const maxValuesRows = 256

// valuesSQL is a VALUES list of rows rows of cols parameters each.
func valuesSQL(rows, cols int) string {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	return "VALUES " + strings.Repeat(row+", ", rows-1) + row
}

// padRows rounds n up to a power of two, so that a statement with a VALUES
// list has few distinct texts and stays prepared.
func padRows(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// chunks splits n items into runs of at most size, as [start, end) pairs.
func chunks(n, size int) [][2]int {
	var out [][2]int
	for i := 0; i < n; i += size {
		out = append(out, [2]int{i, min(i+size, n)})
	}
	return out
}
