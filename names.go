package resourcedir

// What a typo meant: the names the server and the program suggest.

import "strings"

// ClosestName is the candidate nearest to name by edit distance, case
// ignored (the first of equals), and that distance: what a typo meant.
func ClosestName(name string, candidates []string) (string, int) {
	closest, best := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); best < 0 || d < best {
			closest, best = c, d
		}
	}
	return closest, best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
// One row of the table, updated in place: diag is the cell above-left.
func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			diag, row[j] = row[j], min(row[j]+1, row[j-1]+1, diag+cost)
		}
	}
	return row[len(b)]
}
