package nnkernel

import (
	"math"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// This file holds the memory estimates of the SNNK studies: the largest
// memory each run holds at once, added up from its configuration alone,
// before anything is allocated, so that a run above a budget (kernelkit's
// --max-memory) is refused at once. The sizes are float64 products
// (limits.Estimate), so huge configurations give huge, finite totals
// rather than overflowing. They are upper bounds of the dominant
// allocations within a small factor, not an accounting of every byte.

// The sizes of the studies that their memory depends on: the 4 → 6 → 2
// network of the bundle study on 50 inputs, the mini-batches of 64 rows of
// the MLPs, and a slice header (24 bytes) per row of the float32 copies
// that GoMLX takes of the inputs.
const (
	bundleIn, bundleHidden, bundleOut, bundleRows = 4, 6, 2, 50
	mlpBatch                                      = 64
	rowHeader                                     = 24
)

// gomlxBytesPerParam is the heap that GoMLX's training of an MLP (package
// snnk/mlp, pure-Go backend) takes per trainable parameter: each step's
// float32 parameters, gradients, Adam moments and update temporaries, with
// the buffers of earlier steps that await collection. Measured peaks were
// 0.5 to 1 KiB per parameter over 10 to 40 steps, for 2·10⁴ to 5·10⁵
// parameters (TestMemoryMeasured); 1.5 KiB bounds them.
const gomlxBytesPerParam = 1536

// Memory estimates the largest memory the run holds at once: for the
// largest m (the feature counts and draws run one after the other), the
// towers' projection G (m×2000) and the features of one input and one
// weight vector (4m each for the sin tower), and the relative errors of
// the draws.
func (c PointwiseConfig) Memory() limits.Estimate {
	m := 0
	for _, v := range c.Features {
		m = max(m, v)
	}
	var e limits.Estimate
	e.Add("tower projection", m, pointwiseDim)
	e.Add("tower features", 12, m)
	e.Add("per-draw errors", c.Draws)
	return e
}

// Memory estimates the largest memory the run holds at once: for the
// largest m, the projections of both towers (m×4 and m×4m: the second
// tower takes the first one's 4m features), the bundled weights of both
// layers and the features of the 50 inputs through both towers (4m
// columns each) with their projections (m columns).
func (c BundleConfig) Memory() limits.Estimate {
	m := 0
	for _, v := range c.Features {
		m = max(m, v)
	}
	fm := float64(max(m, 0))
	var e limits.Estimate
	e.AddBytes("tower projections", 8*fm*(bundleIn+4*fm))
	e.AddBytes("bundled weights and features", 8*4*fm*(bundleHidden+2*bundleOut+2*bundleRows))
	e.AddBytes("projections of the inputs and weights", 8*fm*(bundleHidden+bundleOut+2*bundleRows))
	return e
}

// Memory estimates the largest memory the run holds at once, beyond the
// training and test sets (which are loaded before and not counted): their
// standardised copies, labels and one-hot targets, the per-seed
// accuracies, and the larger of the two parts of the study, which run one
// after the other:
//
//   - the MLPs, trained one at a time on inputs of width w = max(d, 4M)
//     (the cos-SNNK tower's 4M features): the tower's projection (M×d),
//     the projections and features of the training and test rows (float64),
//     GoMLX's float32 copies of them (the training rows once, the test rows
//     twice), GoMLX's training buffers (about 1.5 KiB per parameter of
//     both layers: parameters, gradients, Adam's moments and the
//     temporaries of the steps, see gomlxBytesPerParam), a mini-batch's
//     activations and the test logits;
//   - the closed-form model of D = 16M features (a cos tower of 4M
//     features): its projection (4M×d), the features of the training and
//     test rows with their projections, the ridge statistics (D×(D+K+1))
//     and solve (the Cholesky factor or, for a singular system, the
//     pseudo-inverse's copies: 3·D² at most) and the predictions.
//
// It reads the data sets' sizes and labels only; without both data sets it
// counts nothing (Classify refuses them).
func (c ClassifyConfig) Memory() limits.Estimate {
	var e limits.Estimate
	if c.Train == nil || c.Test == nil {
		return e
	}
	ntr, nte := float64(c.Train.Rows()), float64(c.Test.Rows())
	fd, fk := float64(c.Train.Cols()), float64(classes(c.Train))
	fm, fh := float64(max(c.M, 0)), float64(max(c.Hidden, 0))
	e.AddBytes("standardised rows", 8*(ntr+nte)*fd)
	e.AddBytes("labels and one-hot targets", 8*(ntr+nte+ntr*fk))
	e.Add("per-seed accuracies", 4, c.Seeds)

	w := math.Max(fd, 4*fm)
	var mlp limits.Estimate
	mlp.AddBytes("tower projection", 8*fm*fd)
	mlp.AddBytes("tower features", 8*(ntr+nte)*(w+fm))
	mlp.AddBytes("float32 copies of the inputs", ntr*(4*w+rowHeader)+2*4*nte*w)
	mlp.AddBytes("GoMLX training buffers", gomlxBytesPerParam*(w*fh+fh*fk+fh+fk))
	mlp.AddBytes("MLP activations", 4*4*mlpBatch*(w+fh+fk)+4*nte*(2*fh+fk)+nte*rowHeader)

	D := 16 * fm
	var closed limits.Estimate
	closed.AddBytes("closed-form tower projection", 8*4*fm*fd)
	closed.AddBytes("closed-form features", 8*(ntr+nte)*(D+4*fm))
	closed.AddBytes("ridge statistics", 8*D*(D+fk+1))
	closed.AddBytes("ridge solve", 8*(3*D*D+2*D*fk))
	closed.AddBytes("predictions", 8*nte*fk)

	if closed.Bytes() > mlp.Bytes() {
		e.Merge(closed)
	} else {
		e.Merge(mlp)
	}
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
