package features

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

// cosArgs returns projections and phases like those of the cos form
// (normal projections of several scales, phases in [0, 2π)), with a few
// arguments beyond cosLimit at odd places, so that the kernel's fallback
// to math.Cos is exercised.
func cosArgs(n int) (a, b []float64) {
	r := rand.New(rand.NewPCG(5, 6))
	a = make([]float64, n)
	b = make([]float64, n)
	for i := range a {
		a[i] = r.NormFloat64() * math.Pow(10, float64(i%5-1))
		b[i] = 2 * math.Pi * r.Float64()
	}
	for _, i := range []int{5, 6, 17, 40, n - 2} {
		a[i] = (r.Float64() - 0.5) * 1e7
	}
	a[23] = 99999.9
	return a, b
}

// TestCosRowAccuracy: cosRow is within 3·10⁻¹⁶·|c| of c·math.Cos and
// cosRow32 within one float32 rounding (2⁻²⁴ relative, plus 10⁻⁸·|c|
// absolute for the polynomial), on every row length from 0 to 37 (the
// kernel's blocks of four and the tails) and a long row.
func TestCosRowAccuracy(t *testing.T) {
	a, b := cosArgs(1003)
	const c = 0.7
	for _, n := range append([]int{1003}, func() []int {
		s := make([]int, 38)
		for i := range s {
			s[i] = i
		}
		return s
	}()...) {
		out := make([]float64, n)
		out32 := make([]float32, n)
		cosRow(out, a[:n], b, c)
		cosRow32(out32, a[:n], b, c)
		for j := 0; j < n; j++ {
			want := c * math.Cos(a[j]+b[j])
			if d := math.Abs(out[j] - want); d > 3e-16*c {
				t.Fatalf("n=%d: cosRow[%d] = %v, want %v (error %.3g)", n, j, out[j], want, d)
			}
			if d := math.Abs(float64(out32[j]) - want); d > math.Abs(want)*0x1p-24+1e-8*c {
				t.Fatalf("n=%d: cosRow32[%d] = %v, want %v (error %.3g)", n, j, out32[j], want, d)
			}
		}
	}
}

// TestCosKernelMatchesGo: where the CPU has the AVX2 kernel, cosRow and
// cosRow32 give the same bits as the pure-Go loops, so features do not
// depend on the CPU.
func TestCosKernelMatchesGo(t *testing.T) {
	if !haveCosKernel {
		t.Skip("no AVX2 kernel on this CPU")
	}
	a, b := cosArgs(4099)
	const c = 0.031
	out, ref := make([]float64, len(a)), make([]float64, len(a))
	cosRow(out, a, b, c)
	cosRowGo(ref, a, b, c)
	for j := range out {
		if math.Float64bits(out[j]) != math.Float64bits(ref[j]) {
			t.Fatalf("cosRow[%d] = %v, pure Go %v", j, out[j], ref[j])
		}
	}
	o32, r32 := make([]float32, len(a)), make([]float32, len(a))
	cosRow32(o32, a, b, c)
	cosRow32Go(r32, a, b, c)
	for j := range o32 {
		if math.Float32bits(o32[j]) != math.Float32bits(r32[j]) {
			t.Fatalf("cosRow32[%d] = %v, pure Go %v", j, o32[j], r32[j])
		}
	}
}

// BenchmarkCosRow measures the cos form's element-wise pass per value:
// the kernel (where the CPU has it), the pure-Go loop, and math.Cos.
func BenchmarkCosRow(b *testing.B) {
	a, ph := cosArgs(2048)
	for i := range a {
		a[i] = math.Mod(a[i], 30)
	}
	out := make([]float64, len(a))
	out32 := make([]float32, len(a))
	for _, f := range []struct {
		name string
		fn   func()
	}{
		{"cosRow", func() { cosRow(out, a, ph, 0.03) }},
		{"cosRow32", func() { cosRow32(out32, a, ph, 0.03) }},
		{"pure-Go", func() { cosRowGo(out, a, ph, 0.03) }},
		{"math.Cos", func() {
			for j, v := range a {
				out[j] = 0.03 * math.Cos(v+ph[j])
			}
		}},
	} {
		b.Run(f.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f.fn()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(a)), "ns/value")
		})
	}
}

// TestTransform32: for every form, Transform32 writes the float64
// features of Transform rounded to float32 — exactly for the forms
// without a single-precision kernel, and within one float32 rounding plus
// the degree-12 polynomial's 10⁻⁸·|c| for the cos form — on a batch of 150
// rows (chunks of 64 and a partial one) into a strided destination, and
// rejects a destination of the wrong shape.
func TestTransform32(t *testing.T) {
	x := randomRows(150, 7, 9, 0.4)
	for _, cfg := range []Config{
		{Kernel: "rbf", Gamma: 0.3},
		{Kernel: "rbf", Gamma: 0.3, Float32: true},
		{Kernel: "rbf", Form: "sincos", Gamma: 0.3},
		{Kernel: "softmax"},
		{Kernel: "softmax", Form: "hyperbolic"},
		{Kernel: "arccos0"},
		{Kernel: "arccos1"},
		{Kernel: "arccos2"},
	} {
		cfg.Features, cfg.Seed = 66, 4
		mp, err := New(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		z, err := Apply(mp, x)
		if err != nil {
			t.Fatal(err)
		}
		const stride = 70
		dst := blas32.General{Rows: 150, Cols: 66, Stride: stride, Data: make([]float32, 149*stride+66)}
		if err := mp.Transform32(dst, x); err != nil {
			t.Fatal(err)
		}
		c := math.Sqrt(2.0 / 66)
		for i := 0; i < 150; i++ {
			for j := 0; j < 66; j++ {
				got, want := dst.Data[i*stride+j], z.At(i, j)
				if mp.kind == kindCos {
					if d := math.Abs(float64(got) - want); d > math.Abs(want)*0x1p-24+1e-8*c {
						t.Fatalf("%v: feature (%d,%d) %v, float64 %v", mp, i, j, got, want)
					}
				} else if got != float32(want) {
					t.Fatalf("%v: feature (%d,%d) %v, want float32(%v)", mp, i, j, got, want)
				}
			}
		}
		if err := mp.Transform32(blas32.General{Rows: 150, Cols: 65, Stride: 65, Data: make([]float32, 150*65)}, x); err == nil {
			t.Errorf("%v: Transform32 into 65 columns: no error", mp)
		}
	}
}
