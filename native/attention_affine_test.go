package native

import (
	"math"
	"testing"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// TestExp32 checks the float32 exponential against math.Exp rounded to
// float32: within 2 ulp (relative 2·2⁻²³) over the normal range, on a grid
// and at random points, and equal to it (math.Exp's path) outside.
func TestExp32(t *testing.T) {
	const tol = 2.0 / (1 << 23)
	var xs []float32
	for x := -86.5; x < 88; x += 1.0 / 64 {
		xs = append(xs, float32(x))
	}
	r := rng.New(1)
	for range 100000 {
		xs = append(xs, float32(-86.5+174.5*r.Float64()))
	}
	xs = append(xs, 0, -0.5, 0.5, float32(math.Ln2), -float32(math.Ln2))
	var worst float64
	ys := append([]float32(nil), xs...)
	expSlice(ys)
	for i, x := range xs {
		want := float64(float32(math.Exp(float64(x))))
		got := float64(exp32(x))
		worst = math.Max(worst, math.Abs(got-want)/want)
		if ys[i] != exp32(x) {
			t.Errorf("expSlice gives %v at %v, exp32 %v", ys[i], x, exp32(x))
		}
	}
	t.Logf("exp32: worst relative error %.3g (%d points)", worst, len(xs))
	if !(worst <= tol) {
		t.Errorf("exp32: relative error %.3g exceeds %.3g", worst, tol)
	}
	for _, x := range []float32{-200, -100, -87.5, 88.5, 100, float32(math.Inf(1)), float32(math.Inf(-1))} {
		if got, want := exp32(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("exp32(%v) = %v, want %v", x, got, want)
		}
	}
	if v := exp32(float32(math.NaN())); !math.IsNaN(float64(v)) {
		t.Errorf("exp32(NaN) = %v", v)
	}
	x64 := []float64{-800, -3, 0.3, 700}
	expSlice(x64)
	for i, x := range []float64{-800, -3, 0.3, 700} {
		if x64[i] != math.Exp(x) {
			t.Errorf("expSlice (float64) gives %v at %v, want math.Exp's %v", x64[i], x, math.Exp(x))
		}
	}
}

// TestGELU32 checks the float32 GELU and its derivative against the
// float64 erf form: within 4·10⁻⁷·max(1, |x|), A&S 7.1.26's 1.5·10⁻⁷ on
// erf (halved in Φ) plus float32 rounding of values of size max(1, |x|).
func TestGELU32(t *testing.T) {
	var worstY, worstD float64
	for x := -12.0; x <= 12; x += 1.0 / 256 {
		x32 := float32(x)
		y, d := gelu32(x32)
		wy, wd := geluExact(float64(x32))
		s := math.Max(1, math.Abs(float64(x32)))
		worstY = math.Max(worstY, math.Abs(float64(y)-wy)/s)
		worstD = math.Max(worstD, math.Abs(float64(d)-wd)/s)
	}
	t.Logf("gelu32: worst error %.3g (value), %.3g (derivative), relative to max(1, |x|)", worstY, worstD)
	if !(worstY <= 4e-7) || !(worstD <= 4e-7) {
		t.Errorf("gelu32: errors %.3g, %.3g exceed 4e-7", worstY, worstD)
	}
	if y, d := geluExact(float32(0)); y != 0 || d != 0.5 {
		t.Errorf("GELU(0) = %v, GELU'(0) = %v, want 0 and 0.5", y, d)
	}
}
