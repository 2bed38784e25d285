package analog

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// Config describes the emulated accelerator.
type Config struct {
	// TileRows and TileCols are the crossbar size (default 256×256).
	TileRows, TileCols int
	// GMax is the largest conductance in µS (default 25).
	GMax float64
	// ProgNoise, Drift and ReadNoise switch the PCM noise sources; their
	// scales multiply the model's standard deviations or drift exponents
	// (0 means 1 when the source is on).
	ProgNoise, Drift, ReadNoise bool
	ProgScale, DriftScale       float64
	ReadScale                   float64
	// TInference is the time after programming at which the chip is read,
	// in seconds (default 3600).
	TInference float64
	// ADCBits quantises column currents (0: no ADC quantisation).
	ADCBits int
	// ADCNoise is the standard deviation of Gaussian ADC output noise as a
	// fraction of full scale (0: none).
	ADCNoise float64
	// ADCRange is the ADC full scale as a fraction of the largest possible
	// column current 127·g_max·TileRows (default 1/16).
	ADCRange float64
	// Affine enables the digital per-column scale and offset correction.
	Affine bool
	// InputQuantile sets each tile's INT8 input range to this quantile of
	// |x| over the calibration inputs on its rows (default 0.999; 1 uses
	// the maximum). Larger inputs saturate. With heavy-tailed inputs the
	// maximum wastes most of the 8 bits on rare outliers.
	InputQuantile float64
	// Seed seeds every random draw.
	Seed uint64
}

// Ideal returns a configuration with every noise source off (INT8 inputs
// only, range set by the largest calibration input).
func Ideal() Config { return Config{InputQuantile: 1} }

// PCM returns the full emulation: programming noise, drift, read noise,
// 8-bit ADC and the affine correction, read one hour after programming.
func PCM(seed uint64) Config {
	return Config{ProgNoise: true, Drift: true, ReadNoise: true, ADCBits: 8, Affine: true, Seed: seed}
}

func (c *Config) defaults() error {
	if c.TileRows == 0 {
		c.TileRows = 256
	}
	if c.TileCols == 0 {
		c.TileCols = 256
	}
	if c.GMax == 0 {
		c.GMax = 25
	}
	if c.TInference == 0 {
		c.TInference = 3600
	}
	if c.ADCRange == 0 {
		c.ADCRange = 1.0 / 16
	}
	if c.InputQuantile == 0 {
		c.InputQuantile = 0.999
	}
	for _, p := range []*float64{&c.ProgScale, &c.DriftScale, &c.ReadScale} {
		if *p == 0 {
			*p = 1
		}
	}
	switch {
	case c.TileRows < 1 || c.TileCols < 1:
		return fmt.Errorf("analog: tile size must be positive, got %d×%d", c.TileRows, c.TileCols)
	case !(c.GMax > 0):
		return fmt.Errorf("analog: g_max must be positive, got %v", c.GMax)
	case c.ADCBits < 0 || c.ADCBits > 24:
		return fmt.Errorf("analog: ADC bits must be in 0…24, got %d", c.ADCBits)
	case c.ADCNoise < 0 || c.TInference < 0 || !(c.ADCRange > 0):
		return errors.New("analog: ADC noise, inference time and ADC range must be non-negative (range positive)")
	case c.ProgScale < 0 || c.DriftScale < 0 || c.ReadScale < 0:
		return errors.New("analog: noise scales must be non-negative")
	case !(c.InputQuantile > 0 && c.InputQuantile <= 1):
		return fmt.Errorf("analog: input quantile must lie in (0, 1], got %v", c.InputQuantile)
	}
	return nil
}

const (
	t0    = 20.0   // s, first read after programming (drift reference)
	tRead = 250e-9 // s, read time of the 1/f noise fit
	gRef  = 25.0   // µS, reference g_max of the programming-noise fit
	q     = 127.0  // INT8 full scale
	zclip = 1e-6   // floor of ĝ in the logarithms
)

// ProgSigma returns the programming-noise standard deviation (µS) at target
// conductance g for a chip with maximum conductance gmax.
func ProgSigma(g, gmax float64) float64 {
	x := g / gmax
	return (0.26348 + 1.9650*x - 1.1731*x*x) * gmax / gRef
}

// DriftMoments returns μ_ν and σ_ν of the drift exponent at conductance g.
func DriftMoments(g, gmax float64) (mu, sigma float64) {
	l := math.Log(math.Max(math.Abs(g/gmax), zclip))
	mu = math.Min(0.1, math.Max(0.049, -0.0155*l+0.0244))
	sigma = math.Min(0.045, math.Max(0.008, -0.0125*l-0.0059))
	return
}

// ReadSigma returns the relative standard deviation of the accumulated
// 1/f read noise of a device of programmed conductance g at inference time
// t (seconds after programming).
func ReadSigma(g, gmax, t float64) float64 {
	qs := math.Min(0.0088/math.Max(math.Pow(math.Abs(g/gmax), 0.65), 1e-3), 0.2)
	tt := t + t0
	return qs * math.Sqrt(math.Log((tt+tRead)/(2*tRead)))
}

// tile is one programmed crossbar.
type tile struct {
	r0, r1, c0, c1 int       // input rows [r0, r1), feature columns [c0, c1)
	inScale        float64   // INT8 scale: x_q = round(x/inScale·127)
	g              []float64 // effective conductance G⁺−G⁻, rows×cols (row-major), after noise
	colGain        []float64 // weight units per µS of each column
	fullScale      float64   // ADC full scale (current units)
}

// Crossbar is a projection matrix programmed on emulated tiles.
type Crossbar struct {
	cfg   Config
	m, d  int
	tiles []*tile
	// Affine correction y ← a_j·y + b_j per feature.
	a, b []float64
	// Targets and programmed conductances, for inspection and tests.
	target, programmed []float64
}

// Program maps W (m×d) onto tiles. calib holds calibration inputs (rows of
// length d; the paper uses 2000 training inputs) that set the input scales,
// the column conductance scales and the affine correction.
func Program(w *mat.Dense, calib *mat.Dense, cfg Config) (*Crossbar, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	m, d := w.Dims()
	if calib == nil {
		return nil, errors.New("analog: calibration inputs are required")
	}
	nc, dc := calib.Dims()
	if dc != d || nc == 0 {
		return nil, fmt.Errorf("analog: calibration inputs are %d×%d, projection expects width %d", nc, dc, d)
	}
	for _, v := range w.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("analog: projection has a non-finite value")
		}
	}
	cb := &Crossbar{cfg: cfg, m: m, d: d}
	r := rng.New(cfg.Seed)
	for r0 := 0; r0 < d; r0 += cfg.TileRows {
		r1 := min(r0+cfg.TileRows, d)
		// Per-tile input scale from the calibration inputs.
		abs := make([]float64, 0, nc*(r1-r0))
		for i := 0; i < nc; i++ {
			for _, v := range calib.RawRowView(i)[r0:r1] {
				abs = append(abs, math.Abs(v))
			}
		}
		sort.Float64s(abs)
		s := abs[min(len(abs)-1, int(math.Ceil(cfg.InputQuantile*float64(len(abs))))-1)]
		if s == 0 {
			s = abs[len(abs)-1]
		}
		if s == 0 {
			s = 1
		}
		for c0 := 0; c0 < m; c0 += cfg.TileCols {
			c1 := min(c0+cfg.TileCols, m)
			t := &tile{r0: r0, r1: r1, c0: c0, c1: c1, inScale: s}
			t.fullScale = cfg.ADCRange * q * cfg.GMax * float64(cfg.TileRows)
			rows, cols := r1-r0, c1-c0
			t.g = make([]float64, rows*cols)
			t.colGain = make([]float64, cols)
			// Column scales: largest |Σ x_q w| over the calibration inputs
			// must map to 90% of the ADC full scale, and no weight may exceed
			// g_max.
			for j := 0; j < cols; j++ {
				var wmax, imax float64
				for i := 0; i < rows; i++ {
					wmax = math.Max(wmax, math.Abs(w.At(c0+j, r0+i)))
				}
				if wmax == 0 {
					t.colGain[j] = 1
					continue
				}
				for k := 0; k < nc; k++ {
					xr := calib.RawRowView(k)
					var cur float64
					for i := 0; i < rows; i++ {
						cur += quant(xr[r0+i], s) * w.At(c0+j, r0+i)
					}
					imax = math.Max(imax, math.Abs(cur))
				}
				gcol := cfg.GMax
				if imax > 0 {
					// current at conductance scale gcol: imax·gcol/wmax.
					gcol = math.Min(cfg.GMax, 0.9*t.fullScale*wmax/imax)
				}
				t.colGain[j] = wmax / gcol
			}
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					tg := w.At(c0+j, r0+i) / t.colGain[j]
					gp, gm := math.Max(tg, 0), math.Max(-tg, 0)
					cb.target = append(cb.target, tg)
					gp = cb.device(gp, r)
					gm = cb.device(gm, r)
					t.g[i*cols+j] = gp - gm
					cb.programmed = append(cb.programmed, gp-gm)
				}
			}
			cb.tiles = append(cb.tiles, t)
		}
	}
	cb.a = make([]float64, m)
	cb.b = make([]float64, m)
	for j := range cb.a {
		cb.a[j] = 1
	}
	if cfg.Affine {
		if err := cb.fitAffine(w, calib); err != nil {
			return nil, err
		}
	}
	return cb, nil
}

// device applies programming noise, drift and read noise to one device of
// target conductance g ≥ 0.
func (cb *Crossbar) device(g float64, rng interface{ NormFloat64() float64 }) float64 {
	c := cb.cfg
	gt := g
	if c.ProgNoise {
		g = math.Max(0, g+c.ProgScale*ProgSigma(gt, c.GMax)*rng.NormFloat64())
	}
	if c.Drift {
		mu, sd := DriftMoments(gt, c.GMax)
		nu := math.Abs(mu+sd*rng.NormFloat64()) * c.DriftScale
		g *= math.Pow((c.TInference+t0)/t0, -nu)
	}
	if c.ReadNoise {
		g = math.Max(0, g+math.Abs(g)*c.ReadScale*ReadSigma(g, c.GMax, c.TInference)*rng.NormFloat64())
	}
	return g
}

// quant returns the INT8 code of x for scale s (saturating).
func quant(x, s float64) float64 {
	v := math.Round(x / s * q)
	return math.Max(-q, math.Min(q, v))
}

// Dims returns m (features) and d (inputs).
func (cb *Crossbar) Dims() (m, d int) { return cb.m, cb.d }

// Conductances returns the target and programmed (after every enabled
// noise source) effective conductances G⁺−G⁻ of all devices, in µS.
func (cb *Crossbar) Conductances() (target, programmed []float64) {
	return cb.target, cb.programmed
}

// Project writes the emulated projection X Wᵀ (n×m) into dst. ADC output
// noise for row i is drawn from a generator seeded by (Seed, i), so the
// result does not depend on how rows are split across calls or workers.
func (cb *Crossbar) Project(dst, x *mat.Dense) error {
	return cb.ProjectFrom(dst, x, 0)
}

// ProjectFrom is Project for rows whose global index starts at offset.
func (cb *Crossbar) ProjectFrom(dst, x *mat.Dense, offset int) error {
	n, d := x.Dims()
	if d != cb.d {
		return fmt.Errorf("analog: input has %d columns, crossbar expects %d", d, cb.d)
	}
	if r, c := dst.Dims(); r != n || c != cb.m {
		return fmt.Errorf("analog: destination is %d×%d, want %d×%d", r, c, n, cb.m)
	}
	c := cb.cfg
	parallel.Chunks(n, 32, func(_, lo, hi int) {
		xq := make([]float64, c.TileRows)
		cur := make([]float64, c.TileCols)
		for i := lo; i < hi; i++ {
			out := dst.RawRowView(i)
			clear(out)
			var noise interface{ NormFloat64() float64 }
			if c.ADCNoise > 0 {
				noise = rng.New(c.Seed ^ (0x9e3779b97f4a7c15 * uint64(offset+i+1)))
			}
			xr := x.RawRowView(i)
			for _, t := range cb.tiles {
				rows, cols := t.r1-t.r0, t.c1-t.c0
				for k := 0; k < rows; k++ {
					xq[k] = quant(xr[t.r0+k], t.inScale)
				}
				clear(cur[:cols])
				for k := 0; k < rows; k++ {
					if xq[k] == 0 {
						continue
					}
					gr := t.g[k*cols : (k+1)*cols]
					v := xq[k]
					for j, g := range gr {
						cur[j] += v * g
					}
				}
				for j := 0; j < cols; j++ {
					iv := cur[j]
					if c.ADCNoise > 0 {
						iv += c.ADCNoise * t.fullScale * noise.NormFloat64()
					}
					if c.ADCBits > 0 {
						levels := float64(int64(1)<<(c.ADCBits-1)) - 1
						step := t.fullScale / levels
						iv = math.Max(-levels, math.Min(levels, math.Round(iv/step))) * step
					}
					out[t.c0+j] += iv * t.colGain[j] * t.inScale / q
				}
			}
			for j := range out {
				out[j] = cb.a[j]*out[j] + cb.b[j]
			}
		}
	})
	return nil
}

// fitAffine fits y_exact ≈ a·y_emulated + b per column on the calibration
// inputs.
func (cb *Crossbar) fitAffine(w, calib *mat.Dense) error {
	n, _ := calib.Dims()
	emu := mat.NewDense(n, cb.m, nil)
	if err := cb.Project(emu, calib); err != nil {
		return err
	}
	var exact mat.Dense
	exact.Mul(calib, w.T())
	for j := 0; j < cb.m; j++ {
		var sx, sy, sxx, sxy float64
		for i := 0; i < n; i++ {
			x, y := emu.At(i, j), exact.At(i, j)
			sx += x
			sy += y
			sxx += x * x
			sxy += x * y
		}
		fn := float64(n)
		den := fn*sxx - sx*sx
		if n < 2 || den <= 1e-12*math.Max(1, fn*sxx) {
			continue // keep the identity
		}
		cb.a[j] = (fn*sxy - sx*sy) / den
		cb.b[j] = (sy - cb.a[j]*sx) / fn
	}
	return nil
}

// Projectors returns the projector factory of the feature-map contract
// (features.NewProjector) that programs each projection matrix a map holds
// onto its own emulated crossbar, calibrated on calib (rows of the map's
// inputs). The k-th matrix programmed (in the order the map asks for them,
// which is fixed) uses the seed cfg.Seed + k, so the same map and seed give
// the same noise. With it, any projecting map — an RFF map, a hybrid
// estimator, SNNK input towers — runs on the emulated hardware:
//
//	hw, err := features.WithProjectors(mp, analog.Projectors(calib, analog.PCM(1)))
func Projectors(calib *mat.Dense, cfg Config) features.NewProjector {
	var k uint64
	return func(w *mat.Dense) (features.Projector, error) {
		c := cfg
		c.Seed += k
		k++
		return Program(w, calib, c)
	}
}
