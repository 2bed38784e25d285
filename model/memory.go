package model

import (
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Memory estimates the largest memory a random-feature fit of opt holds
// at once, beyond its training rows, for dim features, inputs input
// columns and at most outputs target columns (classes): the projection
// (dim × inputs), statLanes lanes of feature chunks (ChunkRows × dim)
// and of per-fold ridge statistics (dim × (dim + outputs + 1) each, one
// set per fold: the k of k-fold selection, or the calibration's folds),
// and the solve's copy of one D × D system. It is computed from the sizes
// alone, in float64, so that a fit out of proportion to the memory budget
// (fit --features 16384) is refused before anything is allocated.
func Memory(opt Options, dim, inputs, outputs int) limits.Estimate {
	var e limits.Estimate
	chunk := opt.ChunkRows
	if chunk <= 0 {
		chunk = 2048
	}
	folds := 1
	if opt.Select == "kfold" || opt.Calibrate {
		folds = max(opt.Folds, 2)
	}
	e.Add("projection", dim, inputs)
	e.Add("feature chunks", statLanes, chunk, dim)
	e.AddBytes("ridge statistics", 8*float64(statLanes)*float64(folds)*float64(dim)*(float64(dim)+float64(outputs)+1))
	e.Add("solve", dim, dim+outputs)
	return e
}
