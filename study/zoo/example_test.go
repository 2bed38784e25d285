package zoo_test

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/zoo"
)

// Run puts softmax-kernel estimators side by side: pointwise relative
// MSEs of exp(xᵀy) at each norm r and angle θ (with the closed forms of
// the papers), timings and, given Config.Data, attention errors. Here
// FAVOR+ and OPRF (FAVOR++) with m = d = 16 at r = 1: OPRF's closed-form
// relative MSE is below FAVOR+'s at both angles, as the OPRF paper shows
// it is everywhere. The measured MSEs and times, which depend on rounding
// and on the machine, are not printed.
func ExampleRun() {
	orf := sampler.Orthogonal{}
	cfg := zoo.Config{
		Estimators: []zoo.Estimator{{Name: "positive", Sampler: sampler.Gaussian{}}, {Name: "oprf", Sampler: orf}},
		Dim:        16, Norms: []float64{1}, Angles: []float64{0, math.Pi / 2}, Draws: 100, TimingRows: 64,
	}
	res, err := zoo.Run(context.Background(), cfg, nil)
	if err != nil {
		panic(err)
	}
	theory := map[string]map[float64]float64{}
	for _, p := range res.Points {
		fmt.Printf("%-12s m=%d r=%.0f θ/π=%.1f exp(xᵀy)=%.4f\n", p.Estimator, p.Dim, p.R, p.Theta/math.Pi, p.True)
		if theory[p.Estimator] == nil {
			theory[p.Estimator] = map[float64]float64{}
		}
		theory[p.Estimator][p.Theta] = p.Theory
	}
	for _, th := range cfg.Angles {
		fmt.Printf("θ/π=%.1f: OPRF's closed form below FAVOR+'s: %v\n", th/math.Pi, theory["oprf/orf"][th] < theory["positive/iid"][th])
	}
	fmt.Println(len(res.Timing), "timing rows")
	// Output:
	// positive/iid m=16 r=1 θ/π=0.0 exp(xᵀy)=2.7183
	// positive/iid m=16 r=1 θ/π=0.5 exp(xᵀy)=1.0000
	// oprf/orf     m=16 r=1 θ/π=0.0 exp(xᵀy)=2.7183
	// oprf/orf     m=16 r=1 θ/π=0.5 exp(xᵀy)=1.0000
	// θ/π=0.0: OPRF's closed form below FAVOR+'s: true
	// θ/π=0.5: OPRF's closed form below FAVOR+'s: true
	// 2 timing rows
}
