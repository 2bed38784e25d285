package hrf

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// This file holds what the pointwise estimation studies of the softmax
// kernel SM(x, y) = exp(xᵀy) of the HRF paper share; each study has a file
// of its own: by angle (Fig. 2/5, angles.go), on pairs of data rows
// (Table 1, data.go), on clustered data (App. H.1, clustered.go) and as
// softmax sampling quality (Sec. 4.2, softmax_sampling.go). The
// estimators are the maps of package catalog whose kernel is "softmax",
// looked up by name with a feature budget D: the plain maps use D features
// (trig and hyperbolic round an odd D up), the hybrids are FLOP-matched to
// D (hybrid.MatchFLOPs) and the clustered hybrid uses per-pair projections
// sized to D.

// DefaultEstimators returns the estimators the estimation studies
// compare when a configuration names none: trig, positive and angular.
func DefaultEstimators() []string { return []string{"trig", "positive", "angular"} }

// namedEstimator is an estimator of a study: the label of its rows (the name
// as given) and its canonical catalog name.
type namedEstimator struct {
	label, entry string
}

// resolveEstimators resolves estimator names to catalog maps of the softmax
// kernel; nil names mean DefaultEstimators.
func resolveEstimators(reg *features.Registry, names []string) ([]namedEstimator, error) {
	if len(names) == 0 {
		names = DefaultEstimators()
	}
	var known []string
	for _, n := range reg.Names() {
		if e, err := reg.Lookup(n); err == nil && e.Kernel == "softmax" {
			known = append(known, e.Name)
		}
	}
	out := make([]namedEstimator, len(names))
	for i, n := range names {
		e, err := reg.Lookup(n)
		if err != nil || e.Kernel != "softmax" {
			return nil, fmt.Errorf("hrf: unknown estimator %.40q (want %s)", n, strings.Join(known, ", "))
		}
		out[i] = namedEstimator{label: strings.TrimSpace(n), entry: e.Name}
	}
	return out, nil
}

// checkBudget validates the settings the estimation studies share.
func checkBudget(budget, draws, minDraws int) error {
	if err := limits.Dim("hrf: the feature budget", budget); err != nil {
		return err
	}
	return limits.Count("hrf: the number of draws", draws, minDraws)
}

// progressFunc returns a function that reports progress if progress is
// not nil.
func progressFunc(progress func(done, total int), total int) func(done int) {
	return func(done int) {
		if progress != nil {
			progress(done, total)
		}
	}
}

// meanSquaredError returns the mean squared difference of est and exact
// (+Inf when it is beyond float64).
func meanSquaredError(est, exact []float64) float64 {
	d := make([]float64, len(est))
	for i, v := range est {
		d[i] = v - exact[i]
	}
	r := rms(d)
	return r * r
}

// scaleRows scales every non-zero row of x to Euclidean norm r.
func scaleRows(x *mat.Dense, r float64) {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		nr := math.Sqrt(floats.Dot(row, row))
		if nr == 0 {
			continue
		}
		for j := range row {
			row[j] *= r / nr
		}
	}
}
