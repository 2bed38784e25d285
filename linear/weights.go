package linear

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Weight returns the total weight of the rows: SumW for weighted
// statistics, N otherwise.
func (s *Stats) Weight() float64 {
	if s.Weighted {
		return s.SumW
	}
	return float64(s.N)
}

// CheckWeights returns an error naming the first weight of w that is
// negative, NaN or infinite; weights must be finite and non-negative.
func CheckWeights(w []float64) error {
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("linear: weight %v of row %d is not a finite non-negative number", v, i)
		}
	}
	return nil
}

// AddWeighted accumulates the rows of z (n×D) and targets y (n×K) with
// the weights w (n finite, non-negative values): the statistics of the
// weighted ridge problem min Σ w_i‖y_i − Wᵀz_i − b‖² + λ‖W‖²,
//
//	ZᵀWZ, ZᵀWY, Σw_i z_i, Σw_i y_i, Σw_i y_i² and the total weight Σw_i,
//
// with W = diag(w). Rows of positive weight are scaled by √w_i and go
// through the BLAS calls of Add (ZᵀWZ = (W^½Z)ᵀ(W^½Z) as SYRK tiles); rows
// of weight zero are left out, so a row of weight zero is the same as no
// row (N counts the rows of positive weight) and an integer weight m is
// the same, to rounding, as the row repeated m times. A negative, NaN or
// infinite weight, or a length of w other than n, is an error and leaves
// s unchanged. A nil w is Add, bit for bit.
//
// Fit, GCV and KFold use the total weight where they would use the row
// count: the weights are frequency weights, so integer weights give the
// fit and the GCV scores of the repeated rows (see GCV and KFold).
func (s *Stats) AddWeighted(z, y *mat.Dense, w []float64) error {
	if w == nil {
		return s.Add(z, y)
	}
	_, d := z.Dims()
	return s.addWeighted(z, y, w, tileSide(d))
}

// AddWeightedSerial is AddWeighted on the calling goroutine alone, as
// AddSerial is for Add; a nil w is AddSerial.
func (s *Stats) AddWeightedSerial(z, y *mat.Dense, w []float64) error {
	if w == nil {
		return s.AddSerial(z, y)
	}
	_, d := z.Dims()
	return s.addWeighted(z, y, w, max(d, 1))
}

// AddWeightedFloat32 is AddWeighted with the features in single
// precision, their products computed as AddFloat32 computes them (the
// rows scaled by √w_i and rounded to float32 before the SSYRK); a nil w
// is AddFloat32.
func (s *Stats) AddWeightedFloat32(z blas32.General, y *mat.Dense, w []float64) error {
	if w == nil {
		return s.AddFloat32(z, y)
	}
	return s.addWeightedFloat32(z, y, w, tileSide(z.Cols))
}

// AddWeightedFloat32Serial is AddWeightedFloat32 on the calling goroutine
// alone, as AddFloat32Serial is for AddFloat32; a nil w is
// AddFloat32Serial.
func (s *Stats) AddWeightedFloat32Serial(z blas32.General, y *mat.Dense, w []float64) error {
	if w == nil {
		return s.AddFloat32Serial(z, y)
	}
	return s.addWeightedFloat32(z, y, w, max(z.Cols, 1))
}

// addWeighted is AddWeighted with tiles of side tb.
func (s *Stats) addWeighted(z, y *mat.Dense, w []float64, tb int) error {
	n, d := z.Dims()
	ny, k := y.Dims()
	if d != s.D || k != s.K || n != ny || len(w) != n {
		return fmt.Errorf("linear: AddWeighted: got features %dx%d, targets %dx%d and %d weights, want D=%d, K=%d and equal rows", n, d, ny, k, len(w), s.D, s.K)
	}
	if err := CheckWeights(w); err != nil {
		return err
	}
	yr := y.RawMatrix()
	s.addWeightedTargets(yr, w)
	m, sw := s.scratch.sqrtWeights(w)
	if m > 0 {
		zs := s.scratch.z64(m * d)
		ys := s.scratch.yw(m * k)
		zr := z.RawMatrix()
		r := 0
		for i, v := range w {
			if v == 0 {
				continue
			}
			scaleRow(zs[r*d:(r+1)*d], sw[r], zr.Data[i*zr.Stride:i*zr.Stride+d])
			scaleRow(ys[r*k:(r+1)*k], sw[r], yr.Data[i*yr.Stride:i*yr.Stride+k])
			r++
		}
		s.addTiles(blas64.General{Rows: m, Cols: d, Stride: d, Data: zs}, blas64.General{Rows: m, Cols: k, Stride: k, Data: ys}, sw, tb)
	}
	s.countWeighted(m, w)
	return nil
}

// addWeightedFloat32 is AddWeightedFloat32 with tiles of side tb.
func (s *Stats) addWeightedFloat32(z blas32.General, y *mat.Dense, w []float64, tb int) error {
	n, d := z.Rows, z.Cols
	ny, k := y.Dims()
	if d != s.D || k != s.K || n != ny || len(w) != n {
		return fmt.Errorf("linear: AddWeightedFloat32: got features %dx%d, targets %dx%d and %d weights, want D=%d, K=%d and equal rows", n, d, ny, k, len(w), s.D, s.K)
	}
	if n > 0 && (z.Stride < d || len(z.Data) < (n-1)*z.Stride+d) {
		panic("linear: AddWeightedFloat32: short feature matrix")
	}
	if err := CheckWeights(w); err != nil {
		return err
	}
	yr := y.RawMatrix()
	s.addWeightedTargets(yr, w)
	m, sw := s.scratch.sqrtWeights(w)
	if m > 0 {
		zs := s.scratch.z32(m * d)
		ys := s.scratch.yw(m * k)
		r := 0
		for i, v := range w {
			if v == 0 {
				continue
			}
			dst := zs[r*d : (r+1)*d]
			for j, x := range z.Data[i*z.Stride : i*z.Stride+d] {
				dst[j] = float32(sw[r] * float64(x))
			}
			scaleRow(ys[r*k:(r+1)*k], sw[r], yr.Data[i*yr.Stride:i*yr.Stride+k])
			r++
		}
		s.addTiles32(blas32.General{Rows: m, Cols: d, Stride: d, Data: zs}, blas64.General{Rows: m, Cols: k, Stride: k, Data: ys}, sw, tb)
	}
	s.countWeighted(m, w)
	return nil
}

// scaleRow sets dst to a·src.
func scaleRow(dst []float64, a float64, src []float64) {
	for j, v := range src {
		dst[j] = a * v
	}
}

// addWeightedTargets adds the rows of y, weighted by w, to Σy and Σy²;
// rows of weight zero are skipped (so that they add nothing, whatever
// their targets).
func (s *Stats) addWeightedTargets(yr blas64.General, w []float64) {
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		for j, v := range yr.Data[i*yr.Stride : i*yr.Stride+yr.Cols] {
			wv := wi * v
			s.SumY[j] += wv
			s.SumY2[j] += wv * v
		}
	}
}

// countWeighted adds m rows of positive weight and the weights w to the
// row count and the total weight, making s weighted.
func (s *Stats) countWeighted(m int, w []float64) {
	if !s.Weighted {
		s.SumW, s.Weighted = float64(s.N), true
	}
	for _, v := range w {
		s.SumW += v
	}
	s.N += m
}

// sqrtWeights returns the number m of positive weights of w and their
// square roots, in order, in a slice kept between calls.
func (sc *scratch) sqrtWeights(w []float64) (int, []float64) {
	if cap(sc.sw) < len(w) {
		sc.sw = make([]float64, len(w))
	}
	sw := sc.sw[:0]
	for _, v := range w {
		if v > 0 {
			sw = append(sw, math.Sqrt(v))
		}
	}
	return len(sw), sw
}

func (sc *scratch) z64(n int) []float64 {
	if len(sc.zw) < n {
		sc.zw = make([]float64, n)
	}
	return sc.zw[:n]
}

func (sc *scratch) z32(n int) []float32 {
	if len(sc.zw32) < n {
		sc.zw32 = make([]float32, n)
	}
	return sc.zw32[:n]
}

func (sc *scratch) yw(n int) []float64 {
	if len(sc.ys) < n {
		sc.ys = make([]float64, n)
	}
	return sc.ys[:n]
}
