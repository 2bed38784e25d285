package analog

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

func gauss(r, c int, seed uint64) *mat.Dense {
	g, _ := sampler.Gaussian{}.Sample(r, c, seed)
	return g
}

// TestIdealEqualsINT8: with every noise source off the emulation is the
// digital projection of INT8-rounded inputs, across several tiles.
func TestIdealEqualsINT8(t *testing.T) {
	const m, d = 300, 270 // 2×2 tiles, partial
	w := gauss(m, d, 1)
	calib := gauss(200, d, 2)
	x := gauss(20, d, 3)
	cb, err := Program(w, calib, Ideal())
	if err != nil {
		t.Fatal(err)
	}
	got := mat.NewDense(20, m, nil)
	if err := cb.Project(got, x); err != nil {
		t.Fatal(err)
	}
	// Reference: quantise each tile's inputs with its scale.
	want := mat.NewDense(20, m, nil)
	for _, tl := range cb.tiles {
		for i := 0; i < 20; i++ {
			for j := tl.c0; j < tl.c1; j++ {
				var s float64
				for k := tl.r0; k < tl.r1; k++ {
					s += quant(x.At(i, k), tl.inScale) * tl.inScale / 127 * w.At(j, k)
				}
				want.Set(i, j, want.At(i, j)+s)
			}
		}
	}
	if !mat.EqualApprox(got, want, 1e-9) {
		t.Error("ideal emulation differs from the INT8-input projection")
	}
	// And the INT8 error is within its bound Σ|w|·s/254 per output.
	var exact mat.Dense
	exact.Mul(x, w.T())
	for i := 0; i < 20; i++ {
		for j := 0; j < m; j++ {
			var bound float64
			for _, tl := range cb.tiles {
				if j < tl.c0 || j >= tl.c1 {
					continue
				}
				for k := tl.r0; k < tl.r1; k++ {
					bound += math.Abs(w.At(j, k)) * tl.inScale / 254
				}
			}
			if math.Abs(got.At(i, j)-exact.At(i, j)) > bound+1e-9 {
				t.Fatalf("output (%d,%d) off by %g, INT8 bound %g", i, j, got.At(i, j)-exact.At(i, j), bound)
			}
		}
	}
}

// deviceStats programs a constant matrix and returns the programmed
// conductances and the common target.
func deviceStats(t *testing.T, cfg Config) (target float64, got []float64) {
	const m, d = 200, 200
	w := mat.NewDense(m, d, nil)
	for i := range w.RawMatrix().Data {
		w.RawMatrix().Data[i] = 1
	}
	calib := mat.NewDense(1, d, nil) // zero calibration input: columns at g_max
	cb, err := Program(w, calib, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg, pr := cb.Conductances()
	return tg[0], pr
}

func checkMeanStd(t *testing.T, name string, v []float64, mean, sd float64) {
	t.Helper()
	m, s := stat.MeanStdDev(v, nil)
	n := float64(len(v))
	if math.Abs(m-mean) > 4*sd/math.Sqrt(n)+1e-12 {
		t.Errorf("%s: mean %.5g, model %.5g", name, m, mean)
	}
	if math.Abs(s-sd) > 4*sd/math.Sqrt(2*n)+1e-12 {
		t.Errorf("%s: standard deviation %.5g, model %.5g", name, s, sd)
	}
}

func TestProgrammingNoise(t *testing.T) {
	g, got := deviceStats(t, Config{ProgNoise: true, Seed: 1})
	if g != 25 {
		t.Fatalf("target conductance %v, want g_max = 25", g)
	}
	// The effective conductance is G⁺ − G⁻ with G⁻ targeted at 0: its noise
	// N(0, σ₀²), σ₀ = ProgSigma(0), is clipped at 0, which shifts the mean by
	// −σ₀/√(2π) and adds σ₀²(1/2 − 1/(2π)) to the variance.
	s0 := ProgSigma(0, 25)
	mean := g - s0/math.Sqrt(2*math.Pi)
	sd := math.Sqrt(ProgSigma(g, 25)*ProgSigma(g, 25) + s0*s0*(0.5-1/(2*math.Pi)))
	checkMeanStd(t, "programming noise", got, mean, sd)
}

func TestDrift(t *testing.T) {
	const tinf = 86400.0
	g, got := deviceStats(t, Config{Drift: true, TInference: tinf, Seed: 2})
	mu, sd := DriftMoments(g, 25)
	nu := make([]float64, len(got))
	for i, v := range got {
		nu[i] = -math.Log(v/g) / math.Log((tinf+t0)/t0)
	}
	// At ĝ = 1, μ_ν = 0.049 and σ_ν = 0.008: the folding at 0 is negligible.
	checkMeanStd(t, "drift exponent", nu, mu, sd)
}

func TestReadNoise(t *testing.T) {
	g, got := deviceStats(t, Config{ReadNoise: true, TInference: 3600, Seed: 3})
	checkMeanStd(t, "read noise", got, g, g*ReadSigma(g, 25, 3600))
}

func TestADCQuantisation(t *testing.T) {
	w := gauss(10, 8, 1)
	calib := gauss(50, 8, 2)
	cb, _ := Program(w, calib, Config{ADCBits: 4})
	y := mat.NewDense(5, 10, nil)
	_ = cb.Project(y, gauss(5, 8, 3))
	tl := cb.tiles[0]
	step := tl.fullScale / 7
	for i := 0; i < 5; i++ {
		for j := 0; j < 10; j++ {
			levels := y.At(i, j) / (tl.colGain[j] * tl.inScale / 127) / step
			if math.Abs(levels-math.Round(levels)) > 1e-9 || math.Abs(levels) > 7 {
				t.Fatalf("output (%d,%d) is %v ADC steps, not an integer in ±7", i, j, levels)
			}
		}
	}
}

func TestSeedsReproduce(t *testing.T) {
	w := gauss(64, 16, 1)
	calib := gauss(100, 16, 2)
	x := gauss(30, 16, 3)
	run := func(seed uint64) *mat.Dense {
		cfg := PCM(seed)
		cfg.ADCNoise = 0.001
		cb, err := Program(w, calib, cfg)
		if err != nil {
			t.Fatal(err)
		}
		y := mat.NewDense(30, 64, nil)
		_ = cb.Project(y, x)
		return y
	}
	a, b, c := run(5), run(5), run(6)
	if !mat.Equal(a, b) {
		t.Error("same seed, different emulation")
	}
	if mat.Equal(a, c) {
		t.Error("different seeds, same emulation")
	}
	// Splitting the batch does not change ADC noise.
	cfg := PCM(5)
	cfg.ADCNoise = 0.001
	cb, _ := Program(w, calib, cfg)
	part := mat.NewDense(10, 64, nil)
	_ = cb.ProjectFrom(part, x.Slice(20, 30, 0, 16).(*mat.Dense), 20)
	if !mat.Equal(part, a.Slice(20, 30, 0, 64)) {
		t.Error("ADC noise depends on how rows are batched")
	}
}

// TestFeatureMapThroughAccelerator: a random Fourier feature map with its
// projection on the emulated chip; ideal hardware stays within INT8
// rounding of the digital features (2%), PCM noise (programming noise of
// 1-8% of g_max per device after the affine correction) adds a larger but
// bounded error (26% here).
func TestFeatureMapThroughAccelerator(t *testing.T) {
	const d = 16
	mp, _ := features.New(features.Config{Kernel: "rbf", Gamma: 0.1, Features: 256, Sampler: sampler.Truncated{K: 3}, Seed: 1}, d)
	calib := gauss(500, d, 2)
	x := gauss(100, d, 3)
	z, _ := features.Apply(mp, x)
	for _, c := range []struct {
		cfg Config
		max float64
	}{{Ideal(), 0.02}, {PCM(7), 0.4}} {
		cb, err := Program(mp.W(), calib, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		za, err := features.Apply(mp.WithProjector(cb), x)
		if err != nil {
			t.Fatal(err)
		}
		var diff mat.Dense
		diff.Sub(za, z)
		rel := mat.Norm(&diff, 2) / mat.Norm(z, 2)
		t.Logf("relative feature error %.4f", rel)
		if rel > c.max || rel == 0 {
			t.Errorf("relative feature error %.4f, want (0, %v]", rel, c.max)
		}
	}
}

// TestTableVIII reproduces Supplementary Table VIII of the analog paper.
func TestTableVIII(t *testing.T) {
	for _, row := range []struct {
		l, d, m int
		dev     Hardware
		lat, en float64
	}{
		{1024, 512, 1024, AIMC, 0.0170, 0.1100},
		{1024, 512, 1024, GPUINT8, 0.0017, 0.6883},
		{1024, 512, 1024, GPUFP16, 0.0034, 1.3766},
		{1024, 512, 1024, CPU, 0.8738, 221.0748},
		{1024, 1024, 2048, AIMC, 0.0681, 0.4401},
		{1024, 1024, 2048, GPUINT8, 0.0069, 2.7532},
		{1024, 1024, 2048, GPUFP16, 0.0138, 5.5064},
		{1024, 1024, 2048, CPU, 3.4953, 884.2991},
	} {
		c, err := ProjectionCost(row.dev, row.l, row.d, row.m)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.LatencyMS-row.lat) > 0.5e-4 || math.Abs(c.EnergyMJ-row.en) > 0.5e-4*math.Max(1, row.en) {
			t.Errorf("%s L=%d d=%d m=%d: %.4f ms, %.4f mJ; table %.4f ms, %.4f mJ", row.dev.Name, row.l, row.d, row.m, c.LatencyMS, c.EnergyMJ, row.lat, row.en)
		}
	}
}

func TestBadConfig(t *testing.T) {
	w := gauss(4, 3, 1)
	calib := gauss(5, 3, 2)
	for _, cfg := range []Config{{ADCBits: 30}, {GMax: -1}, {ADCNoise: -0.1}, {ProgScale: -1}} {
		if _, err := Program(w, calib, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	if _, err := Program(w, gauss(5, 4, 2), Config{}); err == nil {
		t.Error("calibration of the wrong width accepted")
	}
	if _, err := Program(w, nil, Config{}); err == nil {
		t.Error("missing calibration accepted")
	}
	if _, err := ProjectionCost(AIMC, 0, 1, 1); err == nil {
		t.Error("L = 0 accepted")
	}
}
