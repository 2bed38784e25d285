package data

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// SplitAt returns the first n rows and the rest.
func (d *Dataset) SplitAt(n int) (train, test *Dataset, err error) {
	rows := d.Rows()
	if n <= 0 || n >= rows {
		return nil, nil, fmt.Errorf("data: split point %d not inside (0, %d)", n, rows)
	}
	a := make([]int, n)
	b := make([]int, rows-n)
	for i := range a {
		a[i] = i
	}
	for i := range b {
		b[i] = n + i
	}
	return d.Subset(a), d.Subset(b), nil
}

// Split shuffles the rows with the seed and returns a training set and a
// test set holding the fraction testFrac of the rows.
func (d *Dataset) Split(testFrac float64, seed uint64) (train, test *Dataset, err error) {
	rows := d.Rows()
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("data: test fraction %v not in (0, 1)", testFrac)
	}
	nt := int(math.Round(testFrac * float64(rows)))
	if nt < 1 || nt >= rows {
		return nil, nil, fmt.Errorf("data: test fraction %v of %d rows leaves an empty side", testFrac, rows)
	}
	perm := rng.New(seed).Perm(rows)
	return d.Subset(perm[nt:]), d.Subset(perm[:nt]), nil
}
