package device

import (
	"context"
	"fmt"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/model"
)

// The feature-map and ridge benchmarks are named Benchmark<Op>/<device>/
// <variant>/<case>, as the sequence benchmarks are, and
// scripts/gpu_torch_maps.py prints lines of the same form for PyTorch
// (device "torch-f32"), so that scripts/gpu_run.sh builds one table. They
// run in float32 on the pure-Go backend at small sizes (so that CI
// compiles them and a run takes seconds) and on CUDA and
// KERNELKIT_TEST_DEVICE where those open; with KERNELKIT_BENCH_LARGE=1
// the devices other than the pure-Go one take the sizes of issue 18's
// PyTorch figures:
//
//	positive (FAVOR+) map   n = 2²⁰ rows, d = 64 → D = 256   (PyTorch eager 3.9 ms)
//	ridge statistics, fit   n = 2²⁰ rows, d = 28, D = 2048   (PyTorch fit 188 ms)
//
// Rates: GFLOP/s of the products (the projection 2nDd; for the
// statistics also ZᵀZ and ZᵀY, 2nD² + 2nDK; for the fit also the
// Cholesky solve, D³/3), and for the map GB/s of the float32 rows read and
// features written (its memory-bound limit).

// mapsBenchLarge reports whether the large sizes run on d.
func mapsBenchLarge(d *Device) bool {
	return os.Getenv("KERNELKIT_BENCH_LARGE") == "1" && d.Name() != Go
}

// mapsDevName names a device in benchmark names, e.g. "cuda-f32".
func mapsDevName(d *Device) string {
	if d.Float32() {
		return d.Name() + "-f32"
	}
	return d.Name() + "-f64"
}

// benchRows returns n×d rows of N(0, scale²) entries.
func benchRows(n, d int, scale float64) *mat.Dense {
	r := rng.New(1)
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = scale * r.NormFloat64()
	}
	return x
}

// mapsBenchLoop times run after one untimed call (which compiles the
// graphs and copies constant inputs to the device) and reports GFLOP/s
// and, if bytes > 0, GB/s per operation.
func mapsBenchLoop(b *testing.B, run func() error, flops, bytes float64) {
	if err := run(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(flops/sec/1e9, "GFLOP/s")
	if bytes > 0 {
		b.ReportMetric(bytes/sec/1e9, "GB/s")
	}
}

// BenchmarkMapPositive times the FAVOR+ positive map with its log-domain
// stabilisation (row-max subtraction; TransformScaled's graph), d = 64,
// D = 256: "resident" runs one graph on rows already on the device and
// frees the features left there (PyTorch's measurement: 4096 rows, or 2²⁰
// at the large size), "transform" is Map.TransformScaled from host
// float64 rows to host float64 features in batches of 2¹⁶ rows.
func BenchmarkMapPositive(b *testing.B) {
	const d, D = 64, 256
	mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: D, Seed: 1}, d)
	if err != nil {
		b.Fatal(err)
	}
	for _, dev := range benchDevices(b, true) {
		n := 4096
		if mapsBenchLarge(dev) {
			n = 1 << 20
		}
		x := benchRows(n, d, 0.35)
		flops := 2 * float64(n) * d * D
		bytes := 4 * float64(n) * (d + D)
		name := fmt.Sprintf("%s/%%s/n%dd%dD%d", mapsDevName(dev), n, d, D)
		m, err := dev.Map(mp)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf(name, "resident"), func(b *testing.B) {
			xt, err := stageTensor(dev.DType(), x.RawMatrix().Data, n, d)
			if err != nil {
				b.Fatal(err)
			}
			args := []any{xt}
			for _, p := range m.params {
				args = append(args, p)
			}
			mapsBenchLoop(b, func() error {
				outs, err := m.scaled.Exec(args...)
				if err != nil {
					return err
				}
				return releaseAll(outs...)
			}, flops, bytes)
			if err := releaseAll(xt); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf(name, "transform"), func(b *testing.B) {
			mb, err := m.WithBatchRows(min(n, 1<<16))
			if err != nil {
				b.Fatal(err)
			}
			z := mat.NewDense(n, D, nil)
			mapsBenchLoop(b, func() error {
				_, err := mb.TransformScaled(z, x)
				return err
			}, flops, bytes)
		})
	}
}

// ridgeBenchSizes returns n, d, D and the batch rows of the ridge
// benchmarks on dev.
func ridgeBenchSizes(dev *Device) (n, d, D, batch int) {
	if mapsBenchLarge(dev) {
		return 1 << 20, 28, 2048, 1 << 15
	}
	return 4096, 28, 256, 1024
}

// BenchmarkRidgeStats times the device ridge statistics (rbf cos features,
// ZᵀZ, ZᵀY and Σz batch by batch, one target column) from host float64
// rows to host float64 statistics.
func BenchmarkRidgeStats(b *testing.B) {
	for _, dev := range benchDevices(b, true) {
		n, d, D, batch := ridgeBenchSizes(dev)
		mp, err := features.New(features.Config{Kernel: "rbf", Gamma: 1 / float64(d), Features: D, Seed: 1}, d)
		if err != nil {
			b.Fatal(err)
		}
		x := benchRows(n, d, 1)
		y := benchRows(n, 1, 1)
		fn, fd, fD := float64(n), float64(d), float64(D)
		b.Run(fmt.Sprintf("%s/stats/n%dd%dD%d", mapsDevName(dev), n, d, D), func(b *testing.B) {
			mapsBenchLoop(b, func() error {
				acc, err := dev.NewRidgeStats(mp, 1, 1, RidgeOptions{BatchRows: batch})
				if err != nil {
					return err
				}
				if err := acc.Add(context.Background(), x, y, nil); err != nil {
					return err
				}
				_, err = acc.Result()
				return err
			}, 2*fn*fD*fd+2*fn*fD*fD+2*fn*fD, 0)
		})
	}
}

// BenchmarkRidgeFit times a whole regression fit: model.Fit with the
// device statistics and the host's Cholesky solve (issue 18's "RFF ridge
// fit"), from host float64 rows.
func BenchmarkRidgeFit(b *testing.B) {
	for _, dev := range benchDevices(b, true) {
		n, d, D, batch := ridgeBenchSizes(dev)
		x := benchRows(n, d, 1)
		yv := make([]float64, n)
		for i := range yv {
			yv[i] = x.At(i, 0) * x.At(i, 1)
		}
		train := &data.Dataset{X: x, Y: yv}
		opt := model.Options{Task: model.Regression, Lambda: 1e-3,
			Features:    features.Config{Kernel: "rbf", Gamma: 1 / float64(d), Features: D, Seed: 1},
			Accumulator: dev.Accumulator(RidgeOptions{BatchRows: batch})}
		fn, fd, fD := float64(n), float64(d), float64(D)
		b.Run(fmt.Sprintf("%s/fit/n%dd%dD%d", mapsDevName(dev), n, d, D), func(b *testing.B) {
			mapsBenchLoop(b, func() error {
				_, err := model.Fit(context.Background(), opt, train)
				return err
			}, 2*fn*fD*fd+2*fn*fD*fD+2*fn*fD+fD*fD*fD/3, 0)
		})
	}
}
