package model

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"
)

// columnMoments accumulates the count, means and squared deviations of the
// columns of batches of rows (Chan, Golub & LeVeque's pairwise update), as
// data.ScalerAccumulator does, but keeping the raw moments that the
// 'scale' bandwidth needs.
type columnMoments struct {
	n        float64
	mean, m2 []float64
}

func (c *columnMoments) add(x *mat.Dense) error {
	r, d := x.Dims()
	if r == 0 {
		return nil
	}
	if c.mean == nil {
		c.mean, c.m2 = make([]float64, d), make([]float64, d)
	} else if d != len(c.mean) {
		return errors.New("model: batches of different widths")
	}
	bm, bm2 := make([]float64, d), make([]float64, d)
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			bm[j] += v
		}
	}
	for j := range bm {
		bm[j] /= float64(r)
	}
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			e := v - bm[j]
			bm2[j] += e * e
		}
	}
	nb := float64(r)
	n := c.n + nb
	for j := range c.mean {
		delta := bm[j] - c.mean[j]
		c.mean[j] += delta * nb / n
		c.m2[j] += bm2[j] + delta*delta*c.n*nb/n
	}
	c.n = n
	return nil
}

// gamma returns 1/(d·Var X) with Var the population variance of all n·d
// entries, of the raw rows or (standardize) of the rows standardised as
// data.FitScaler does; 1 when that variance is zero, as scikit-learn does.
func (c *columnMoments) gamma(standardize bool) (float64, error) {
	if c.n == 0 {
		return 0, errors.New("model: gamma 'scale' needs training rows")
	}
	d := float64(len(c.mean))
	var grand float64
	for _, m := range c.mean {
		grand += m / d
	}
	var v float64
	for j, m := range c.mean {
		s2 := c.m2[j] / c.n
		if standardize {
			// The scaler divides by σ_j, or by 1 for a constant column.
			if s := math.Sqrt(s2); s >= 1e-12*math.Max(1, math.Abs(m)) {
				s2 = 1
			}
			v += s2 / d
			continue
		}
		v += (s2 + (m-grand)*(m-grand)) / d
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("model: the variance of the training matrix is %v", v)
	}
	if v == 0 {
		return 1, nil
	}
	return 1 / (d * v), nil
}

// ScaleGamma returns scikit-learn's gamma='scale' for the rows of x:
// 1/(d·Var X), the variance taken over all n·d entries (population
// variance), after standardisation when standardize is set (each
// non-constant column then has variance 1, so the result is 1/(number of
// non-constant columns)); 1 when the variance is zero.
// The moments are those of blocks of GammaBlock rows merged in block
// order, as ScaleGammaStream computes them with chunk = GammaBlock, so
// that an in-memory and a streamed fit get the same γ bit for bit.
func ScaleGamma(x *mat.Dense, standardize bool) (float64, error) {
	var c columnMoments
	n, d := x.Dims()
	for lo := 0; lo < n; lo += GammaBlock {
		if err := c.add(x.Slice(lo, min(lo+GammaBlock, n), 0, d).(*mat.Dense)); err != nil {
			return 0, err
		}
	}
	return c.gamma(standardize)
}

// GammaBlock is the number of rows of the blocks of ScaleGamma's moments.
const GammaBlock = 16384

// ScaleGammaStream is ScaleGamma over a pass of streamed rows, read in
// batches of chunk rows (default 2048): with batches of GammaBlock rows
// (a reader that returns as many rows as asked, but at the end, as
// data.CSVFile does), ScaleGamma's value bit for bit, else to rounding.
func ScaleGammaStream(open Opener, standardize bool, chunk int) (float64, error) {
	if chunk <= 0 {
		chunk = 2048
	}
	b, closeFn, err := open()
	if err != nil {
		return 0, err
	}
	var c columnMoments
	for {
		x, _, rerr := b.Read(chunk)
		if x != nil {
			if err := c.add(x); err != nil {
				return 0, errors.Join(err, closeFn())
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return 0, errors.Join(rerr, closeFn())
		}
	}
	if err := closeFn(); err != nil {
		return 0, err
	}
	return c.gamma(standardize)
}
