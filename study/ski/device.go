package ski

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// This file holds the device comparison of the Toeplitz studies: the same
// operators applied by kernelkit's CPU path and by a device's graphs
// (package device: GoMLX's pure-Go backend, or a GPU through XLA), with the
// times of both and their difference.

// DeviceConfig configures CompareDevice: the operators of the
// timing study (TimingConfig: d channels of piecewise-linear
// warped kernels plus a sparse filter, SKI with r inducing points, the
// causal FD operator of a GeLU MLP) on the CPU and on a device.
type DeviceConfig struct {
	// Device runs the device side (required).
	Device *device.Device `json:"-"`
	// Timing gives the operators, the lengths (512 … MaxN) and the seed.
	// A device without the FFT op runs the TNO and FD operators as dense
	// products; it runs only the lengths n ≤ Timing.MaxDense with d·n² ≤
	// 2²⁶ values.
	Timing TimingConfig `json:"timing"`
}

// denseMax bounds d·n² for the dense device forms of the study.
const denseMax = 1 << 26

// DeviceRow compares one operator at one length.
type DeviceRow struct {
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

// DeviceResult is the result of CompareDevice.
type DeviceResult struct {
	Rows   []DeviceRow
	Device string
	Setup  TimingConfig
}

// CompareDevice applies the timing study's TNO (by FFT on the CPU), SKI
// and causal FD operators to one random n×d sequence at n = 512, 1024, …
// MaxN on the CPU (package toeplitz) and on the device (Device.NewTNO,
// NewSKI, NewCausalFD with the same data), and reports both times and the
// largest difference. Progress counts the lengths.
func CompareDevice(ctx context.Context, cfg DeviceConfig, progress func(done, total int)) (*DeviceResult, error) {
	if cfg.Device == nil {
		return nil, errors.New("ski: no device")
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
	res := &DeviceResult{Device: dev.String(), Setup: tc}
	ns := timingLengths(tc.MaxN)
	for i, n := range ns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x, filters, kernels, ts, err := timingInputs(tc, rpe, n)
		if err != nil {
			return nil, err
		}
		// Without the FFT op the device runs dense forms: only short
		// sequences.
		onDevice := dev.HasFFT() || (n <= tc.MaxDense && float64(d)*float64(n)*float64(n) <= denseMax)
		for _, op := range []string{"tno", "ski", "fd-causal"} {
			row := DeviceRow{N: n, Op: op}
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
				if err := mixOnDevice(ctx, &row, mk, x, want.RawMatrix().Data); err != nil {
					return nil, err
				}
			}
			res.Rows = append(res.Rows, row)
		}
		reportProgress(progress, i+1, len(ns))
	}
	return res, nil
}

// mixOnDevice builds the device mixer, applies it twice to x (one sequence)
// and fills row's form, times and difference from want.
func mixOnDevice(ctx context.Context, row *DeviceRow, mk func() (*device.Mixer, error), x *mat.Dense, want []float64) error {
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
			return fmt.Errorf("ski: %v (call %d): %w", mx, i+1, err)
		}
		*secs = time.Since(t0).Seconds()
	}
	row.Form = mx.Form()
	row.MaxDiff = maxRelDifference(out.Data, want)
	return nil
}

// Table returns one line per length and operator.
func (r *DeviceResult) Table() *report.Table {
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
func (r *DeviceResult) Render(w io.Writer) error { return r.Table().Render(w) }

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
