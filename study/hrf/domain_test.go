package hrf

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// allEstimators are every softmax-kernel estimator the studies offer.
var allEstimators = []string{"trig", "positive", "hyperbolic", "angular", "gaussian", "bipolar", "clustered",
	"simrf", "oprf", "sderf", "aderf"}

// TestMaxNorm checks the bound against its derivation: 2r² + ln 4 ≤
// ln MaxFloat64 at MaxNorm, and not 0.01 above it.
func TestMaxNorm(t *testing.T) {
	r := MaxNorm()
	if got := 2*r*r + math.Log(4); got > math.Log(math.MaxFloat64) {
		t.Errorf("MaxNorm %v: 2r² + ln 4 = %v beyond ln MaxFloat64", r, got)
	}
	if up := r + 0.01; 2*up*up+math.Log(4) <= math.Log(math.MaxFloat64) {
		t.Errorf("MaxNorm %v is not the largest bound to two decimals", r)
	}
	if s := 4 * math.Exp(2*r*r); math.IsInf(s, 0) {
		t.Errorf("4·exp(2r²) overflows at MaxNorm %v", r)
	}
}

// finiteFloats reports whether every float64 field of the row is finite.
func finiteFloats(row any) bool {
	v := reflect.ValueOf(row)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Float64 && (math.IsNaN(f.Float()) || math.IsInf(f.Float(), 0)) {
			return false
		}
	}
	return true
}

// TestStudiesOverflow is the table of every estimator at norms whose
// results are not representable (30, 1e200, the largest finite float64
// and the float just above MaxNorm): each study refuses them with an error
// wrapping features.ErrOverflow that states the range (before, the data
// study printed +Inf and NaN as MSEs, and OPRF and ADERF failed with
// messages about NaN parameters or a non-converging SVD). At MaxNorm
// itself every study returns finite rows that encode as JSON, or an
// error wrapping features.ErrOverflow — never NaN or ±Inf.
func TestStudiesOverflow(t *testing.T) {
	x, err := sampler.Gaussian{}.Sample(30, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type study struct {
		name string
		run  func(est string, r float64) (rows any, err error)
	}
	studies := []study{
		{"data", func(est string, r float64) (any, error) {
			res, err := Data(ctx, DataConfig{X: x, Estimators: []string{est}, Features: 16, Draws: 2, Pairs: 10, Norms: []float64{r}, Seed: 1}, nil)
			if err != nil {
				return nil, err
			}
			return res.Rows, nil
		}},
		{"angle", func(est string, r float64) (any, error) {
			res, err := Angles(ctx, AnglesConfig{Estimators: []string{est}, Features: 16, Draws: 2, Radii: []float64{r}}, nil)
			if err != nil {
				return nil, err
			}
			return res.Rows, nil
		}},
		{"softmax", func(est string, r float64) (any, error) {
			res, err := SoftmaxSampling(ctx, SoftmaxSamplingConfig{Estimators: []string{est}, Dim: 4, Features: []int{16}, Norms: []float64{r}}, nil)
			if err != nil {
				return nil, err
			}
			return res.Rows, nil
		}},
	}
	above := math.Nextafter(MaxNorm(), math.Inf(1))
	for _, s := range studies {
		for _, est := range allEstimators {
			if est == "clustered" && s.name == "angle" {
				continue // the angle study has no clusters (refused by Validate)
			}
			for _, r := range []float64{30, 1e200, math.MaxFloat64, above} {
				_, err := s.run(est, r)
				if !errors.Is(err, features.ErrOverflow) || !strings.Contains(err.Error(), "18.82") {
					t.Errorf("%s, %s at norm %v: error %v, want ErrOverflow naming the bound 18.82", s.name, est, r, err)
				}
			}
			rows, err := s.run(est, MaxNorm())
			if err != nil {
				if !errors.Is(err, features.ErrOverflow) {
					t.Errorf("%s, %s at MaxNorm: %v, want success or ErrOverflow", s.name, est, err)
				}
				continue
			}
			rv := reflect.ValueOf(rows)
			for i := 0; i < rv.Len(); i++ {
				if !finiteFloats(rv.Index(i).Interface()) {
					t.Errorf("%s, %s at MaxNorm: non-finite row %+v", s.name, est, rv.Index(i).Interface())
				}
			}
			if _, err := json.Marshal(rows); err != nil {
				t.Errorf("%s, %s at MaxNorm: JSON: %v", s.name, est, err)
			}
		}
	}
}

// hugePair is a Pair whose features are all v: its estimates are m·v².
type hugePair struct{ v float64 }

func (h hugePair) Dim() int      { return 4 }
func (h hugePair) InputDim() int { return 2 }
func (h hugePair) Query(dst, x *mat.Dense) error {
	r, c := dst.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst.Set(i, j, h.v)
		}
	}
	return nil
}
func (h hugePair) Key(dst, y *mat.Dense) error { return h.Query(dst, y) }

// TestOverflowWithinRange checks the errors of an estimator whose
// estimates overflow at an accepted norm: the estimates (4·(1e200)² is
// +Inf), a softmax normaliser (1000 estimates of 1e306 each), and the
// moments that must not overflow on the way (rms and meanStd of values
// near MaxFloat64).
func TestOverflowWithinRange(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 1, 1})
	if _, err := estimates(hugePair{1e200}, x, x, "huge", 2); !errors.Is(err, features.ErrOverflow) || !strings.Contains(err.Error(), "huge at norm 2") {
		t.Errorf("estimates of 4e400: %v", err)
	}
	c := mat.NewDense(1000, 2, nil)
	if _, _, _, err := SoftmaxQuality(hugePair{math.Sqrt(1e306 / 4)}, x, c); !errors.Is(err, features.ErrOverflow) {
		t.Errorf("normaliser of 1000 estimates of 1e306: %v", err)
	}
	big := []float64{1e308, -1e308, 1e308}
	if got := rms(big); math.Abs(got/1e308-1) > 1e-15 {
		t.Errorf("rms of ±1e308 = %v", got)
	}
	m, s := meanStd([]float64{1e308, 1.5e308})
	if math.Abs(m/1.25e308-1) > 1e-15 || math.Abs(s/(0.5e308/math.Sqrt2)-1) > 1e-15 {
		t.Errorf("meanStd(1e308, 1.5e308) = %v, %v", m, s)
	}
}
