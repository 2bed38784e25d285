package linear

import (
	"errors"
	"fmt"
)

// AddSums adds the statistics of n rows given by their sums, as an
// accelerator computes them (package device): ztz = ZᵀZ (D×D row-major;
// only its upper triangle is read), zty = ZᵀY (D×K row-major), sumZ = Σz
// (D), sumY = Σy (K) and sumY2 = Σy² (K). It is an error if a length does
// not match the statistics' D and K or n is negative. Adding the sums of
// batches of rows in a fixed order gives the same bits on every run, as
// Merge does.
func (s *Stats) AddSums(n int, ztz, zty, sumZ, sumY, sumY2 []float64) error {
	d, k := s.D, s.K
	if n < 0 {
		return errors.New("linear: AddSums: negative number of rows")
	}
	if len(ztz) != d*d || len(zty) != d*k || len(sumZ) != d || len(sumY) != k || len(sumY2) != k {
		return fmt.Errorf("linear: AddSums: got sums of lengths %d, %d, %d, %d, %d, want D=%d, K=%d (D², D·K, D, K, K)",
			len(ztz), len(zty), len(sumZ), len(sumY), len(sumY2), d, k)
	}
	for i := 0; i < d; i++ {
		dst := s.ZtZ[i*d+i : (i+1)*d]
		for j, v := range ztz[i*d+i : (i+1)*d] {
			dst[j] += v
		}
	}
	for i, v := range zty {
		s.ZtY[i] += v
	}
	for i, v := range sumZ {
		s.SumZ[i] += v
	}
	for i, v := range sumY {
		s.SumY[i] += v
	}
	for i, v := range sumY2 {
		s.SumY2[i] += v
	}
	s.count(n)
	return nil
}
