package aimc

import (
	"math"
	"strings"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the memory estimates of the analog studies: the largest
// memory each run holds at once, added up from its configuration alone,
// before anything is allocated, so that a run above a budget (kernelkit's
// --max-memory) is refused at once. The sizes are float64 products
// (limits.Estimate), so huge configurations give huge, finite totals
// rather than overflowing. They are upper bounds of the dominant
// allocations within a small factor, not an accounting of every byte. The
// cost model needs none: it computes a few numbers per case, whatever L,
// d and m are (TestCostAllocatesNothing).

// The sizes of the studies that their memory depends on: the first 2000
// standardised training rows calibrate the chip, the first 1000 test rows
// give the Gram errors, a feature map transforms 64 rows at a time per
// worker and exact attention computes 64 rows of scores at a time per
// worker.
const (
	calibRows  = 2000
	gramRows   = 1000
	chunkRows  = 64
	scoreBlock = 64
)

// Memory estimates the largest memory the run holds at once, beyond the
// training and test sets (which are loaded before and not counted): their
// standardised copies, the labels and one-hot targets, and one seed's run
// at the largest D = d·2^ratio (the seeds, samplers and ratios run one
// after the other; every term grows with D): the p×d projections (p = D
// for arccos0, D/2 for the sin/cos features of rbf; the orthogonal
// sampler's d×d blocks), the training features (rows×D), the
// ridge statistics (D×(D+K+1)) and solve (the Cholesky factor or, for a
// singular system, the pseudo-inverse's symmetric copy, eigendecomposition
// and eigenvectors: 3·D² at most), the emulated crossbar (the conductances with
// their targets and programmed values, 5·p·d, and the calibration's
// sorted inputs and projections), the test features and emulated
// projections with the predictions, and the Gram errors on the first 1000
// test rows (the exact and approximate Gram matrices and the features).
// It reads the data sets' sizes and labels only; without both data sets it
// counts nothing (Ridge refuses them).
func (c RidgeConfig) Memory() limits.Estimate {
	var e limits.Estimate
	if c.Train == nil || c.Test == nil {
		return e
	}
	ntr, nte, d, k := c.Train.Rows(), c.Test.Rows(), c.Train.Cols(), classes(c.Train)
	r := 0
	for _, v := range c.Ratios {
		r = max(r, min(v, 1023))
	}
	fD := math.Ldexp(float64(d), r)
	// Projections: D for arccos0, D/2 for the sin/cos features of rbf.
	fp := fD / 2
	for _, kn := range c.Kernels {
		if strings.TrimSpace(kn) != "rbf" {
			fp = fD
		}
	}
	ftr, fte, fd, fk := float64(ntr), float64(nte), float64(d), float64(k)
	e.Add("standardised rows", ntr+nte, d)
	e.Add("labels and one-hot targets", ntr, k+1)
	e.AddBytes("feature projections", 8*fp*fd)
	for _, s := range c.Samplers {
		if s != nil && s.Name() == (sampler.Orthogonal{}).Name() {
			e.Add("orthogonal sampler blocks", 2, d, d)
			break
		}
	}
	e.AddBytes("training features", 8*ftr*fD)
	e.AddBytes("ridge statistics", 8*fD*(fD+fk+1))
	e.AddBytes("ridge solve", 8*(3*fD*fD+2*fD*fk))
	nc := float64(min(ntr, calibRows))
	e.AddBytes("emulated crossbar", 8*(5*fp*fd+nc*fd+2*nc*fp))
	e.AddBytes("test features, projections and scores", 8*fte*(fD+fp+fk))
	g := float64(min(nte, gramRows))
	e.AddBytes("Gram error samples", 8*(2*g*g+g*fD))
	e.AddBytes("feature scratch", 8*float64(parallel.Workers(max(ntr, nte)/chunkRows+1))*chunkRows*2*fD)
	return e
}

// Memory estimates the largest memory the run holds at once: Q, K, V and
// the exact output (L×d each) with exact attention's score blocks (64 rows
// of L scores per worker), the calibration inputs (2L×d), and for the
// largest m (the feature counts run one after the other) the projection
// (m×d), the emulated crossbar (5·m·d conductances, the calibration's
// sorted inputs and its two 2L×m projections) and one linear attention
// (scaled queries and keys, L×d each; their features and the emulated
// projection, L×m each; the output).
func (c AttentionConfig) Memory() limits.Estimate {
	c = c.withDefaults()
	l, d := c.Length, c.Dim
	m := 0
	for _, v := range c.Features {
		m = max(m, v)
	}
	var e limits.Estimate
	e.Add("Q, K, V and the exact output", 4, l, d)
	e.Add("exact attention score blocks", parallel.Workers(l/scoreBlock+1), scoreBlock, l)
	e.Add("calibration inputs", 2, l, d)
	e.Add("feature projections", m, d)
	fm, fd, fc := float64(max(m, 0)), float64(max(d, 0)), 2*float64(max(l, 0))
	e.AddBytes("emulated crossbar", 8*(5*fm*fd+fc*fd+2*fc*fm))
	e.Add("scaled queries, keys and output", 3, l, d)
	e.Add("query and key features and projections", 3, l, m)
	return e
}

// classes returns the number of classes of ds's labels (the largest class
// index plus one; labels that are not class indices are left out), or 1
// without labels, without allocating.
func classes(ds *data.Dataset) int {
	k := 1
	for _, v := range ds.Y {
		if v >= 0 && v < limits.MaxClasses && v == math.Trunc(v) {
			k = max(k, int(v)+1)
		}
	}
	return k
}
