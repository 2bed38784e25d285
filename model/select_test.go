package model

import (
	"context"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/features"
)

// TestSelectNoFiniteScore: when every λ of the grid leaves no degrees of
// freedom for GCV (more features than rows and a tiny λ), the fit is an
// error that says so, not a silent choice of the grid's first λ.
func TestSelectNoFiniteScore(t *testing.T) {
	opt := Options{Task: Classification, Select: "gcv", Grid: []float64{1e-12, 1e-11},
		Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 256, Seed: 1}}
	_, err := Fit(context.Background(), opt, letterRows(40))
	if err == nil || !strings.Contains(err.Error(), "no λ of the grid has a finite gcv score") {
		t.Fatalf("Fit = %v, want the no-finite-score error", err)
	}
}
