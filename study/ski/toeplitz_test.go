package ski

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestErrorBound checks Theorem 1 of the ski-tnn paper at its
// diagnostic kernel (Matérn 5/2, ℓ = 16; n = 128 instead of 256 to keep it
// fast): the measured SKI error
// lies below the bound and falls as the rank grows, as does the error
// against T itself.
func TestErrorBound(t *testing.T) {
	rows, err := ErrorBound(context.Background(), ErrorBoundConfig{N: 128}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ranks := []int{8, 16, 32, 64} // the default ranks
	if len(rows) != len(ranks) {
		t.Fatalf("%d rows, want %d", len(rows), len(ranks))
	}
	for i, r := range rows {
		if r.N != 128 || r.R != ranks[i] {
			t.Errorf("row %d: n = %d, r = %d", i, r.N, r.R)
		}
		if !(r.Measured > 0 && r.Measured <= r.Bound) {
			t.Errorf("r = %d: measured %v, bound %v", r.R, r.Measured, r.Bound)
		}
		if i > 0 && !(r.Measured < rows[i-1].Measured && r.ToExact < rows[i-1].ToExact) {
			t.Errorf("r = %d: error %v (to T %v) not below r = %d's %v (%v)", r.R, r.Measured, r.ToExact, rows[i-1].R, rows[i-1].Measured, rows[i-1].ToExact)
		}
	}
	// Linear interpolation: the error to T falls like h² = ((n−1)/(r−1))²
	// once r resolves the kernel: a factor of about 4 per doubling.
	if q := rows[1].ToExact / rows[2].ToExact; q < 3 || q > 5 {
		t.Errorf("error ratio r = 16 to 32 is %.2f, want about 4", q)
	}
	for _, c := range []ErrorBoundConfig{{Ranks: []int{1}}, {N: 64, Ranks: []int{65}}, {N: 1 << 20}, {Lengthscale: -1}, {Ranks: []int{}}} {
		if _, err := ErrorBound(context.Background(), c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestImpulse checks Theorems 2-4: the impulse responses of
// frequency-domain MLPs with smooth activations (GeLU, SiLU) decay
// super-polynomially, ReLU's only polynomially.
func TestImpulse(t *testing.T) {
	var calls int
	rows, err := Impulse(context.Background(), ImpulseConfig{N: 1024, Lags: []int{0, 8, 64, 512}, Seed: 1},
		func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || calls != 3 {
		t.Fatalf("%d rows, %d progress calls; want 3, 3", len(rows), calls)
	}
	for _, r := range rows {
		if r.Magnitude[0] != 1 || len(r.Magnitude) != 4 || len(r.Lags) != 4 {
			t.Errorf("%s: %+v", r.Activation, r)
		}
		switch r.Activation {
		case "gelu", "silu":
			if r.Magnitude[2] > 1e-10 {
				t.Errorf("%s: |k[64]| = %v, want below 1e-10", r.Activation, r.Magnitude[2])
			}
		case "relu":
			if r.Magnitude[2] < 1e-6 || r.Magnitude[3] < 1e-9 {
				t.Errorf("relu: |k[64]| = %v, |k[512]| = %v: decays too fast for a kink", r.Magnitude[2], r.Magnitude[3])
			}
		default:
			t.Errorf("activation %q", r.Activation)
		}
	}
	for _, c := range []ImpulseConfig{{Activations: []string{"tanh"}}, {N: 16, Lags: []int{17}}, {Hidden: []int{0}}} {
		if _, err := Impulse(context.Background(), c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	// Widths within the dimension limit whose weight matrix is not (2⁴⁸
	// values) are refused before the MLP is drawn.
	if err := (ImpulseConfig{Hidden: []int{1 << 24, 1 << 24}}).Validate(); err == nil || !strings.Contains(err.Error(), "MLP weights") {
		t.Errorf("hidden widths 2²⁴, 2²⁴: %v", err)
	}
}

// TestTiming checks the timing study's rows: one per length 512,
// 1024, 2048, positive times, the dense product only up to MaxDense, a
// speed-up equal to FFT/SKI and a finite SKI error; and the slopes.
func TestTiming(t *testing.T) {
	cfg := TimingConfig{Channels: 2, Inducing: 16, FilterWidth: 5, Lambda: 0.99, MaxN: 2048, MaxDense: 1024, Seed: 1}
	var last, tot int
	rows, err := Timing(context.Background(), cfg, func(done, total int) { last, tot = done, total })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || last != 3 || tot != 3 {
		t.Fatalf("%d rows, progress %d/%d; want 3, 3/3", len(rows), last, tot)
	}
	for i, r := range rows {
		if r.N != 512<<i {
			t.Errorf("row %d: n = %d", i, r.N)
		}
		if !(r.FFT > 0 && r.SKI > 0 && r.FDCausal > 0) || (r.Dense > 0) != (r.N <= 1024) {
			t.Errorf("n = %d: times %+v", r.N, r)
		}
		if r.SKIvsFFT != r.FFT/r.SKI {
			t.Errorf("n = %d: speed-up %v, FFT/SKI %v", r.N, r.SKIvsFFT, r.FFT/r.SKI)
		}
		if !(r.SKIRelErr > 0 && r.SKIRelErr < 2) {
			t.Errorf("n = %d: SKI relative error %v", r.N, r.SKIRelErr)
		}
	}
	s := Slopes(rows)
	for _, k := range []string{"dense", "fft", "ski", "fd"} {
		if v, ok := s[k]; !ok || math.IsNaN(v) {
			t.Errorf("slope %q missing: %v", k, s)
		}
	}
	// No filter: m = 0 is allowed.
	cfg.FilterWidth, cfg.MaxN = 0, 512
	if _, err := Timing(context.Background(), cfg, nil); err != nil {
		t.Errorf("m = 0: %v", err)
	}
	for _, c := range []TimingConfig{
		{Channels: 1, Inducing: 1, Lambda: 0.5, MaxN: 512},
		{Channels: 1, Inducing: 2, Lambda: 1, MaxN: 512},
		{Channels: 1, Inducing: 2, Lambda: 0.5, MaxN: 100},
		{Channels: 1 << 20, Inducing: 2, Lambda: 0.5, MaxN: 1 << 20},
	} {
		if _, err := Timing(context.Background(), c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestSlopes(t *testing.T) {
	// Times exactly c·n² and c·n: slopes 2 and 1.
	var rows []TimingRow
	for _, n := range []int{512, 1024, 2048, 4096} {
		x := float64(n)
		rows = append(rows, TimingRow{N: n, FFT: 1e-9 * x, SKI: 1e-9 * x, FDCausal: 1e-9 * x * x})
	}
	rows[0].Dense = 1e-9 * 512 * 512
	s := Slopes(rows)
	if math.Abs(s["fft"]-1) > 1e-9 || math.Abs(s["fd"]-2) > 1e-9 {
		t.Errorf("slopes %v", s)
	}
	if _, ok := s["dense"]; ok {
		t.Errorf("dense slope from one point: %v", s)
	}
}

// TestReportRender checks the text rendering against the CLI's
// format.
func TestReportRender(t *testing.T) {
	rep := &Report{
		Decay: []DecayRow{{Activation: "gelu", Lags: []int{0, 1}, Magnitude: []float64{1, 0.7271}},
			{Activation: "relu", Lags: []int{0, 1}, Magnitude: []float64{1, 0.3447}}},
		Timing:      []TimingRow{{N: 512, Dense: 0.0016, FFT: 0.0053, SKI: 0.0001, FDCausal: 0.0004, SKIvsFFT: 84, SKIRelErr: 0.687}, {N: 1024, FFT: 0.0011, SKI: 0.0001, FDCausal: 0.0012, SKIvsFFT: 10.9, SKIRelErr: 0.733}},
		Slopes:      map[string]float64{"fft": 0.94, "ski": 2.01},
		TimingSetup: TimingConfig{Channels: 4, Inducing: 16, FilterWidth: 5},
	}
	var b bytes.Buffer
	if err := rep.Render(&b); err != nil {
		t.Fatal(err)
	}
	want := `
impulse responses |k[t]|/|k[0]| of random frequency-domain MLPs (2×32 hidden, n = 4096):
  t       gelu       relu
  0  1.000e+00  1.000e+00
  1  7.271e-01  3.447e-01

timing, d = 4 channels (SKI: r = 16, m = 5; seconds per operator application):
     n   dense     FFT     SKI  FD causal  SKI speed-up  SKI rel. error
   512  0.0016  0.0053  0.0001     0.0004         84.0×           0.687
  1024       -  0.0011  0.0001     0.0012         10.9×           0.733
log-log slopes (time against n): fft 0.94  ski 2.01  
`
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
	rows, err := ErrorBound(context.Background(), ErrorBoundConfig{N: 64, Ranks: []int{8}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := (&Report{SKIError: rows, ErrorSetup: ErrorBoundConfig{N: 64}}).Render(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "SKI spectral-norm error against Theorem 1 (Matérn 5/2 kernel, ℓ = 16, n = 64, linear interpolation):\n  r  ‖E_SKI‖₂  bound") {
		t.Errorf("rendered\n%s", b.String())
	}
	if p := rep.Plot(); p == nil || len(p.Series) != 2 || len(p.Series[0].X) != 1 || p.Series[0].X[0] != 1 {
		t.Errorf("plot %+v (lag 0 must be left out of the log axis)", p)
	}
}

// ExampleErrorBound checks Theorem 1 of the ski-tnn paper: the SKI
// error of a smooth Toeplitz matrix lies below the bound and falls with the
// number of inducing points.
func ExampleErrorBound() {
	rows, err := ErrorBound(context.Background(), ErrorBoundConfig{N: 128, Ranks: []int{8, 16, 32}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("r = %2d: ‖W A Wᵀ − T‖₂/‖T‖₂ = %.3f, below the bound: %v\n", r.R, r.ToExact, r.Measured <= r.Bound)
	}
	// Output:
	// r =  8: ‖W A Wᵀ − T‖₂/‖T‖₂ = 0.129, below the bound: true
	// r = 16: ‖W A Wᵀ − T‖₂/‖T‖₂ = 0.035, below the bound: true
	// r = 32: ‖W A Wᵀ − T‖₂/‖T‖₂ = 0.008, below the bound: true
}
