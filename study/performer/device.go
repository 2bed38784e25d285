package performer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the device comparison of the attention studies: the
// same attention computed by kernelkit's CPU path and by a device's graphs
// (package device: GoMLX's pure-Go backend, or a GPU through XLA), with the
// times of both and their difference.

// DeviceConfig configures CompareDevice.
type DeviceConfig struct {
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
func (c DeviceConfig) Validate() error {
	if c.Device == nil {
		return errors.New("performer: no device")
	}
	if len(c.Lengths) == 0 {
		return errors.New("performer: no sequence lengths given")
	}
	if len(c.Features) == 0 {
		return errors.New("performer: no feature counts given")
	}
	if c.Batch <= 0 || c.Heads <= 0 {
		return fmt.Errorf("performer: batch and heads must be positive, got %d and %d", c.Batch, c.Heads)
	}
	if err := limits.Dim("performer: the head dimension", c.Dim); err != nil {
		return err
	}
	for _, m := range c.Features {
		if err := limits.Dim("performer: the number of features", m); err != nil {
			return err
		}
	}
	bh, err := limits.Mul(c.Batch, c.Heads)
	if err != nil {
		return fmt.Errorf("performer: batch × heads: %w", err)
	}
	for _, l := range c.Lengths {
		if l <= 0 {
			return fmt.Errorf("performer: sequence lengths must be positive, got %d", l)
		}
		// Q, K, V and the outputs of both paths.
		rows, err := limits.Mul(5*bh, l)
		if err != nil {
			return fmt.Errorf("performer: the inputs: %w", err)
		}
		if _, err := limits.Matrix("performer: the attention inputs and outputs", rows, c.Dim); err != nil {
			return err
		}
	}
	return nil
}

// DeviceRow compares one attention at one length (and feature
// count) on the CPU and on the device.
type DeviceRow struct {
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

// DeviceResult is the result of CompareDevice.
type DeviceResult struct {
	Rows []DeviceRow
	// Device describes the device; Batch, Heads, Dim and Causal repeat
	// the configuration.
	Device            string
	Batch, Heads, Dim int
	Causal            bool
}

// CompareDevice runs exact softmax attention (L ≤ MaxExact) and FAVOR+
// attention with each feature count (positive features of orthogonal
// projections, catalog "positive") on random N(0, 1) [B, H, L, d] inputs,
// on the CPU (attention.ApplyTensor) and on the device (Device.Attention,
// with the CPU map's projection), and reports the times, the largest
// difference between the two outputs and, for FAVOR+, the error against
// exact attention on each side. Inputs of length L come from seeds derived
// from Seed and L; the projections from Seed + 1.
func CompareDevice(ctx context.Context, cfg DeviceConfig, progress func(done, total int)) (*DeviceResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dev := cfg.Device
	res := &DeviceResult{Device: dev.String(), Batch: cfg.Batch, Heads: cfg.Heads, Dim: cfg.Dim, Causal: cfg.Causal}
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
			if in[i], err = randTensor(cfg.Batch, cfg.Heads, l, cfg.Dim, base+uint64(i)+1); err != nil {
				return nil, err
			}
		}
		q, k, v := in[0], in[1], in[2]
		var cpuExact, devExact attention.Tensor
		if l <= cfg.MaxExact {
			row := DeviceRow{L: l, Method: "exact"}
			var err error
			cpuExact, devExact, err = compareOn(ctx, &row, dev, attention.Exact{Causal: cfg.Causal}, device.Exact{Causal: cfg.Causal}, q, k, v)
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
			row := DeviceRow{L: l, Method: "favor+", Features: m}
			cpuOut, devOut, err := compareOn(ctx, &row, dev, &attention.Linear{Pair: p, Causal: cfg.Causal},
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

// compareOn times cpu and dev on the inputs, fills row's times and
// difference and returns both outputs.
func compareOn(ctx context.Context, row *DeviceRow, dev *device.Device, cpu attention.Masked, att device.Attention,
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
			return attention.Tensor{}, attention.Tensor{}, fmt.Errorf("performer: %s attention on %v (call %d): %w", row.Method, dev, i+1, err)
		}
		*secs = time.Since(t0).Seconds()
	}
	row.MaxDiff = maxRelDifference(got.Data, want.Data)
	return want, got, nil
}

// randTensor returns a [b, h, l, d] tensor of N(0, 1) values from
// the seed.
func randTensor(b, h, l, d int, seed uint64) (attention.Tensor, error) {
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
func (r *DeviceResult) Table() *report.Table {
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
func (r *DeviceResult) Render(w io.Writer) error { return r.Table().Render(w) }
