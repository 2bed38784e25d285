package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// This file holds the device comparisons of the attention and Toeplitz
// studies: the same quantity computed by kernelkit's CPU path and by a
// device's graphs (package device: GoMLX's pure-Go backend, or a GPU
// through XLA), with the times of both and their difference.

// DeviceAttentionConfig configures DeviceAttention.
type DeviceAttentionConfig struct {
	// Device runs the device side (required).
	Device *device.Device `json:"-"`
	// Lengths are the sequence lengths L.
	Lengths []int `json:"lengths"`
	// Batch, Heads and Dim are B, H and the head dimension d of the
	// random [B, H, L, d] queries, keys and values.
	Batch int `json:"batch"`
	Heads int `json:"heads"`
	Dim   int `json:"d"`
	// Features are the feature counts m of FAVOR+ attention (positive
	// features, orthogonal projections).
	Features []int `json:"features"`
	// Causal selects unidirectional attention.
	Causal bool `json:"causal"`
	// MaxExact is the longest L at which exact attention runs.
	MaxExact int `json:"max_exact"`
	// Seed seeds the inputs and the projections.
	Seed uint64 `json:"seed"`
}

// Validate checks the configuration.
func (c DeviceAttentionConfig) Validate() error {
	if c.Device == nil {
		return errors.New("study: no device")
	}
	if len(c.Lengths) == 0 {
		return errors.New("study: no sequence lengths given")
	}
	if len(c.Features) == 0 {
		return errors.New("study: no feature counts given")
	}
	if c.Batch <= 0 || c.Heads <= 0 {
		return fmt.Errorf("study: batch and heads must be positive, got %d and %d", c.Batch, c.Heads)
	}
	if err := limits.Dim("study: the head dimension", c.Dim); err != nil {
		return err
	}
	for _, m := range c.Features {
		if err := limits.Dim("study: the number of features", m); err != nil {
			return err
		}
	}
	bh, err := limits.Mul(c.Batch, c.Heads)
	if err != nil {
		return fmt.Errorf("study: batch × heads: %w", err)
	}
	for _, l := range c.Lengths {
		if l <= 0 {
			return fmt.Errorf("study: sequence lengths must be positive, got %d", l)
		}
		// Q, K, V and the outputs of both paths.
		rows, err := limits.Mul(5*bh, l)
		if err != nil {
			return fmt.Errorf("study: the inputs: %w", err)
		}
		if _, err := limits.Matrix("study: the attention inputs and outputs", rows, c.Dim); err != nil {
			return err
		}
	}
	return nil
}

// DeviceAttentionRow compares one attention at one length (and feature
// count) on the CPU and on the device.
type DeviceAttentionRow struct {
	L        int    `json:"L"`
	Method   string `json:"method"` // "exact" or "favor+"
	Features int    `json:"features,omitempty"`
	// CPUSecs is the time of the CPU path (attention.ApplyTensor).
	CPUSecs float64 `json:"cpu_seconds"`
	// DeviceFirstSecs is the first device call, which compiles the graph;
	// DeviceSecs the second, with the compiled graph. Both include the
	// copies of inputs and outputs between host and device.
	DeviceFirstSecs float64 `json:"device_first_seconds"`
	DeviceSecs      float64 `json:"device_seconds"`
	// MaxDiff is max |device − CPU| over the outputs, relative to max(1,
	// max |CPU|).
	MaxDiff float64 `json:"max_difference"`
	// CPURelError and DeviceRelError are, for FAVOR+ at lengths with
	// exact attention, ‖O − Ô‖_F/‖O‖_F against exact attention computed on
	// the same side (0: not measured).
	CPURelError    float64 `json:"cpu_rel_error,omitempty"`
	DeviceRelError float64 `json:"device_rel_error,omitempty"`
}

// DeviceAttentionResult is the result of DeviceAttention.
type DeviceAttentionResult struct {
	Rows []DeviceAttentionRow
	// Device describes the device; Batch, Heads, Dim and Causal repeat
	// the configuration.
	Device            string
	Batch, Heads, Dim int
	Causal            bool
}

// DeviceAttention runs exact softmax attention (L ≤ MaxExact) and FAVOR+
// attention with each feature count (positive features of orthogonal
// projections, catalog "positive") on random N(0, 1) [B, H, L, d] inputs,
// on the CPU (attention.ApplyTensor) and on the device (Device.Attention,
// with the CPU map's projection), and reports the times, the largest
// difference between the two outputs and, for FAVOR+, the error against
// exact attention on each side. Inputs of length L come from seeds derived
// from Seed and L; the projections from Seed + 1.
func DeviceAttention(ctx context.Context, cfg DeviceAttentionConfig, progress func(done, total int)) (*DeviceAttentionResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dev := cfg.Device
	res := &DeviceAttentionResult{Device: dev.String(), Batch: cfg.Batch, Heads: cfg.Heads, Dim: cfg.Dim, Causal: cfg.Causal}
	total := len(cfg.Lengths) * (1 + len(cfg.Features))
	done := 0
	step := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	for _, l := range cfg.Lengths {
		base := cfg.Seed*1000003 + uint64(l)*7919
		var in [3]attention.Tensor
		for i := range in {
			var err error
			if in[i], err = deviceRandTensor(cfg.Batch, cfg.Heads, l, cfg.Dim, base+uint64(i)+1); err != nil {
				return nil, err
			}
		}
		q, k, v := in[0], in[1], in[2]
		var cpuExact, devExact attention.Tensor
		if l <= cfg.MaxExact {
			row := DeviceAttentionRow{L: l, Method: "exact"}
			var err error
			cpuExact, devExact, err = deviceCompare(ctx, &row, dev, attention.Exact{Causal: cfg.Causal}, device.Exact{Causal: cfg.Causal}, q, k, v)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, row)
		}
		step()
		for _, m := range cfg.Features {
			p, err := catalog.Default().Pair("positive", features.Options{InputDim: cfg.Dim, Features: m, Sampler: sampler.Orthogonal{}, Seed: cfg.Seed + 1})
			if err != nil {
				return nil, err
			}
			om, err := device.FavorProjection(p)
			if err != nil {
				return nil, err
			}
			row := DeviceAttentionRow{L: l, Method: "favor+", Features: m}
			cpuOut, devOut, err := deviceCompare(ctx, &row, dev, &attention.Linear{Pair: p, Causal: cfg.Causal},
				device.Linear{Omega: om, Causal: cfg.Causal}, q, k, v)
			if err != nil {
				return nil, err
			}
			if cpuExact.Data != nil {
				row.CPURelError = relFrobenius(cpuOut.Data, cpuExact.Data)
				row.DeviceRelError = relFrobenius(devOut.Data, devExact.Data)
			}
			res.Rows = append(res.Rows, row)
			step()
		}
	}
	return res, nil
}

// deviceCompare times cpu and dev on the inputs, fills row's times and
// difference and returns both outputs.
func deviceCompare(ctx context.Context, row *DeviceAttentionRow, dev *device.Device, cpu attention.Masked, att device.Attention,
	q, k, v attention.Tensor) (attention.Tensor, attention.Tensor, error) {
	t0 := time.Now()
	want, err := attention.ApplyTensor(ctx, cpu, q, k, v, nil)
	if err != nil {
		return attention.Tensor{}, attention.Tensor{}, err
	}
	row.CPUSecs = time.Since(t0).Seconds()
	var got attention.Tensor
	for i, secs := range []*float64{&row.DeviceFirstSecs, &row.DeviceSecs} {
		t0 = time.Now()
		if got, err = dev.Attention(ctx, att, q, k, v, nil); err != nil {
			return attention.Tensor{}, attention.Tensor{}, fmt.Errorf("study: %s attention on %v (call %d): %w", row.Method, dev, i+1, err)
		}
		*secs = time.Since(t0).Seconds()
	}
	row.MaxDiff = maxRelDifference(got.Data, want.Data)
	return want, got, nil
}

// deviceRandTensor returns a [b, h, l, d] tensor of N(0, 1) values from
// the seed.
func deviceRandTensor(b, h, l, d int, seed uint64) (attention.Tensor, error) {
	t, err := attention.NewTensor(b, h, l, d)
	if err != nil {
		return attention.Tensor{}, err
	}
	r := rng.New(seed)
	for i := range t.Data {
		t.Data[i] = r.NormFloat64()
	}
	return t, nil
}

// maxRelDifference returns max |a − b| relative to max(1, max |b|).
func maxRelDifference(a, b []float64) float64 {
	scale := 1.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(v))
	}
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m / scale
}

// relFrobenius returns ‖a − b‖/‖b‖.
func relFrobenius(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		d := a[i] - b[i]
		num += d * d
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// Table returns one line per row.
func (r *DeviceAttentionResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("attention on the CPU and on device %s: B=%d, H=%d, d=%d, causal=%v (device times include host↔device copies)",
			r.Device, r.Batch, r.Heads, r.Dim, r.Causal),
		Header: []string{"L", "method", "m", "cpu s", "device s (1st)", "device s", "speed-up", "max |dev−cpu|", "rel err cpu", "rel err dev"},
	}
	for _, row := range r.Rows {
		m, ec, ed := "-", "-", "-"
		if row.Features > 0 {
			m = fmt.Sprint(row.Features)
		}
		if row.CPURelError > 0 {
			ec, ed = report.Fixed(row.CPURelError, 4), report.Fixed(row.DeviceRelError, 4)
		}
		t.Add(row.L, row.Method, m, report.Fixed(row.CPUSecs, 4), report.Fixed(row.DeviceFirstSecs, 4), report.Fixed(row.DeviceSecs, 4),
			report.Fixed(row.CPUSecs/row.DeviceSecs, 2), fmt.Sprintf("%.1e", row.MaxDiff), ec, ed)
	}
	return t
}

// Render writes the table.
func (r *DeviceAttentionResult) Render(w io.Writer) error { return r.Table().Render(w) }

// DeviceToeplitzConfig configures DeviceToeplitz: the operators of the
// timing study (ToeplitzTimingConfig: d channels of piecewise-linear
// warped kernels plus a sparse filter, SKI with r inducing points, the
// causal FD operator of a GeLU MLP) on the CPU and on a device.
type DeviceToeplitzConfig struct {
	// Device runs the device side (required).
	Device *device.Device `json:"-"`
	// Timing gives the operators, the lengths (512 … MaxN) and the seed.
	// A device without the FFT op runs the TNO and FD operators as dense
	// products; it runs only the lengths n ≤ Timing.MaxDense with d·n² ≤
	// 2²⁶ values.
	Timing ToeplitzTimingConfig `json:"timing"`
}

// deviceDenseMax bounds d·n² for the dense device forms of the study.
const deviceDenseMax = 1 << 26

// DeviceToeplitzRow compares one operator at one length.
type DeviceToeplitzRow struct {
	N  int    `json:"n"`
	Op string `json:"op"` // "tno", "ski" or "fd-causal"
	// Form is the device's form ("fft" or "dense"); empty when the device
	// did not run this length.
	Form    string  `json:"form,omitempty"`
	CPUSecs float64 `json:"cpu_seconds"`
	// DeviceFirstSecs (with the graph's compilation) and DeviceSecs (the
	// second call) include the copies between host and device.
	DeviceFirstSecs float64 `json:"device_first_seconds,omitempty"`
	DeviceSecs      float64 `json:"device_seconds,omitempty"`
	// MaxDiff is max |device − CPU| relative to max(1, max |CPU|).
	MaxDiff float64 `json:"max_difference,omitempty"`
}

// DeviceToeplitzResult is the result of DeviceToeplitz.
type DeviceToeplitzResult struct {
	Rows   []DeviceToeplitzRow
	Device string
	Setup  ToeplitzTimingConfig
}

// DeviceToeplitz applies the timing study's TNO (by FFT on the CPU), SKI
// and causal FD operators to one random n×d sequence at n = 512, 1024, …
// MaxN on the CPU (package toeplitz) and on the device (Device.NewTNO,
// NewSKI, NewCausalFD with the same data), and reports both times and the
// largest difference. Progress counts the lengths.
func DeviceToeplitz(ctx context.Context, cfg DeviceToeplitzConfig, progress func(done, total int)) (*DeviceToeplitzResult, error) {
	if cfg.Device == nil {
		return nil, errors.New("study: no device")
	}
	tc := cfg.Timing
	if err := tc.Validate(); err != nil {
		return nil, err
	}
	dev := cfg.Device
	d := tc.Channels
	rpe, err := toeplitz.RandomPiecewiseLinear(33, d, tc.Seed)
	if err != nil {
		return nil, err
	}
	mlp, err := toeplitz.NewMLP([]int{32}, d, toeplitz.GeLU, tc.Seed+1)
	if err != nil {
		return nil, err
	}
	res := &DeviceToeplitzResult{Device: dev.String(), Setup: tc}
	ns := toeplitzTimingLengths(tc.MaxN)
	for i, n := range ns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x, filters, kernels, ts, err := toeplitzTimingInputs(tc, rpe, n)
		if err != nil {
			return nil, err
		}
		// Without the FFT op the device runs dense forms: only short
		// sequences.
		onDevice := dev.HasFFT() || (n <= tc.MaxDense && float64(d)*float64(n)*float64(n) <= deviceDenseMax)
		for _, op := range []string{"tno", "ski", "fd-causal"} {
			row := DeviceToeplitzRow{N: n, Op: op}
			var cpu func(*mat.Dense) (*mat.Dense, error)
			var mk func() (*device.Mixer, error)
			switch op {
			case "tno":
				o, err := toeplitz.NewOperator(ts)
				if err != nil {
					return nil, err
				}
				cpu, mk = o.Apply, func() (*device.Mixer, error) { return dev.NewTNO(ts) }
			case "ski":
				r := min(tc.Inducing, n)
				s, err := toeplitz.NewSKI(n, r, toeplitz.Linear, kernels, filters)
				if err != nil {
					return nil, err
				}
				cpu, mk = s.Apply, func() (*device.Mixer, error) { return dev.NewSKI(n, r, toeplitz.Linear, kernels, filters) }
			case "fd-causal":
				fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(mlp))
				if err != nil {
					return nil, err
				}
				cpu, mk = fd.Apply, func() (*device.Mixer, error) { return dev.NewCausalFD(n, toeplitz.MLPResponse(mlp)) }
			}
			t0 := time.Now()
			want, err := cpu(x)
			if err != nil {
				return nil, err
			}
			row.CPUSecs = time.Since(t0).Seconds()
			if onDevice {
				if err := deviceMix(ctx, &row, mk, x, want.RawMatrix().Data); err != nil {
					return nil, err
				}
			}
			res.Rows = append(res.Rows, row)
		}
		toeplitzProgress(progress, i+1, len(ns))
	}
	return res, nil
}

// deviceMix builds the device mixer, applies it twice to x (one sequence)
// and fills row's form, times and difference from want.
func deviceMix(ctx context.Context, row *DeviceToeplitzRow, mk func() (*device.Mixer, error), x *mat.Dense, want []float64) error {
	mx, err := mk()
	if err != nil {
		return err
	}
	n, d := x.Dims()
	in := device.Seq{Batch: 1, Len: n, Dim: d, Data: x.RawMatrix().Data}
	var out device.Seq
	for i, secs := range []*float64{&row.DeviceFirstSecs, &row.DeviceSecs} {
		t0 := time.Now()
		if out, err = mx.Apply(ctx, in); err != nil {
			return fmt.Errorf("study: %v (call %d): %w", mx, i+1, err)
		}
		*secs = time.Since(t0).Seconds()
	}
	row.Form = mx.Form()
	row.MaxDiff = maxRelDifference(out.Data, want)
	return nil
}

// Table returns one line per length and operator.
func (r *DeviceToeplitzResult) Table() *report.Table {
	c := r.Setup
	t := &report.Table{
		Title: fmt.Sprintf("Toeplitz mixing on the CPU and on device %s: d=%d, SKI r=%d, m=%d (device times include host↔device copies)",
			r.Device, c.Channels, c.Inducing, c.FilterWidth),
		Header: []string{"n", "op", "form", "cpu s", "device s (1st)", "device s", "speed-up", "max |dev−cpu|"},
	}
	for _, row := range r.Rows {
		if row.Form == "" {
			t.Add(row.N, row.Op, "-", report.Fixed(row.CPUSecs, 4), "-", "-", "-", "-")
			continue
		}
		t.Add(row.N, row.Op, row.Form, report.Fixed(row.CPUSecs, 4), report.Fixed(row.DeviceFirstSecs, 4), report.Fixed(row.DeviceSecs, 4),
			report.Fixed(row.CPUSecs/row.DeviceSecs, 2), fmt.Sprintf("%.1e", row.MaxDiff))
	}
	return t
}

// Render writes the table.
func (r *DeviceToeplitzResult) Render(w io.Writer) error { return r.Table().Render(w) }
