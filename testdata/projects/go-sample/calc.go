// Package calc is the go test sample: Max and Index have bugs the tests expose.
package calc

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// Index returns values[i].
func Index(values []int, i int) int {
	return values[i]
}
