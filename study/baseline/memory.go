package baseline

import (
	"math"
	"strings"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// The shape of the embedded letter data (data.Letter) and of the demo's
// split: 20000 rows of 16 features and a label (26 classes), the first
// 16000 for training.
const (
	letterTotal   = 20000
	letterCols    = 16
	letterClasses = 26
	letterTrain   = 16000
)

// The sizes of model.Fit and model.Model.Evaluate that the demo's memory
// depends on: a chunk of 2048 rows per statistics lane (two lanes, each
// with statistics of its own), batches of 8 chunks of standardised rows,
// 256 rows per worker when predicting, and the first 1000 test rows for
// the Gram error.
const (
	fitLanes     = 2
	fitChunk     = 2048
	fitBatch     = 8 * fitChunk
	predictBlock = 256
	gramRows     = 1000
)

// Memory estimates the largest memory the run holds at once: the letter
// data when Train or Test is nil (parsed, then copied by the split; given
// data sets are not counted), and one fit, the largest (the fits run one
// after the other and their memory grows with D, so the largest D counts):
// the projections (D×d; the orthogonal sampler's d×d blocks), two batches
// of standardised rows with their one-hot targets, the ridge statistics
// of both lanes (D×(D+K+1) each) with a chunk of features each, the solve
// (the Cholesky factor or, for a singular system, the pseudo-inverse's
// symmetric copy, eigendecomposition and eigenvectors: 3·D² at most), the
// prediction of the test rows (a 256-row block of features per worker,
// the standardised rows and the scores) and the Gram error on the first
// 1000 test rows (their features, the exact and the approximate Gram
// matrices). It reads the data sets' sizes and labels, nothing else, and
// does not validate the configuration.
func (c DemoConfig) Memory() limits.Estimate {
	var e limits.Estimate
	ntr, nte, d, k := letterTrain, letterTotal-letterTrain, letterCols, letterClasses
	if c.Train == nil || c.Test == nil {
		e.Add("letter data", 2, letterTotal, letterCols+1)
	} else {
		ntr, nte, d, k = c.Train.Rows(), c.Test.Rows(), c.Train.Cols(), classes(c.Train)
	}
	D := 0
	for _, f := range c.Features {
		D = max(D, f)
	}
	orf := false
	for _, s := range c.Samplers {
		orf = orf || strings.TrimSpace(s) == "orf"
	}
	e.Merge(fitMemory(ntr, nte, d, k, D, orf))
	return e
}

// fitMemory estimates a ridge fit (model.RunJob on in-memory rows) of D
// random features on ntr training rows of d columns with k target
// columns, its evaluation on nte test rows and its Gram error.
func fitMemory(ntr, nte, d, k, D int, orf bool) limits.Estimate {
	var e limits.Estimate
	e.Add("feature projections", D, d)
	if orf {
		e.Add("orthogonal sampler blocks", 2, d, d)
	}
	e.Add("standardised batches and targets", 2, min(ntr, fitBatch), d+k+1)
	fd, fk := float64(max(D, 0)), float64(max(k, 0))
	e.AddBytes("ridge statistics", 8*fitLanes*fd*(fd+fk+1))
	e.Add("feature chunks", fitLanes, min(ntr, fitChunk), D)
	e.AddBytes("ridge solve", 8*(3*fd*fd+2*fd*fk))
	e.Add("prediction blocks", parallel.Workers(nte/predictBlock+1), min(nte, predictBlock), D)
	e.Add("standardised test rows and scores", nte, d+k)
	g := min(nte, gramRows)
	e.Add("Gram error sample", g, D+2*g+d)
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
