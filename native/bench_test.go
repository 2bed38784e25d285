package native_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/fft"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
	_ "github.com/kernelkit/kernelkit/train/graphtrain" // the GoMLX engine of the comparison
)

// benchConfig is the speed shape: fd-tnn (bidirectional) at L =
// 512, width 128, depth 4, batch 16 (the CLI's defaults otherwise).
func benchConfig() (arch.ModelConfig, int) {
	cfg := arch.ModelConfig{Kind: arch.KindFDTNN, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: 512, Width: 128, Depth: 4}
	cfg.Defaults()
	return cfg, 16
}

// rfftFLOPs is the conventional count of a real FFT of size N: half the
// 5·N·log₂N of a complex one.
func rfftFLOPs(n int) float64 { return 2.5 * float64(n) * math.Log2(float64(n)) }

// StepFLOPs counts the floating-point operations of one training step
// (forward and backward) of a TNN-kind model on a batch: the products
// (2·m·n·k each: three per linear map: forward, ∂x, ∂W) and the Toeplitz
// products, plus FD-TNN's transforms of its frequency response to
// coefficients and back; the element-wise work (norms, activations,
// Adam: O(B·L·width)) is left out. With executed false the Toeplitz
// products are counted as the algorithm needs them: real FFTs of size 2n,
// 2.5·N·log₂N each, 4·B·e + 2·e per mixer (inputs, outputs and their
// gradients, the coefficient spectra and gradients), three complex
// products of 6 per bin, and FD-TNN's 2·e transforms of size 2n. With
// executed true they are counted as the engine runs them: the same FFTs
// at its size N (fftSize) where it uses FFTs (FFTW loaded, or n > 1024);
// dense real-DFT products otherwise (two ((n+1)×(n/2+1))·((n/2+1)×e)
// products per transform and two ((n/2+1)×(n+1))·((n+1)×e) per inverse,
// four of each per sequence, the coefficient transforms 2(n+1)×(2n−1)·e
// each way, and FD-TNN's dense coefficient products).
func StepFLOPs(cfg arch.ModelConfig, B int, executed bool) float64 {
	R := float64(B * cfg.Length)
	d, e, h, n := float64(cfg.Width), float64(cfg.Expand*cfg.Width), float64(cfg.Hidden), cfg.Length
	perBlock := 3 * 2 * R * (2*d*e + e*d) // GTU: wu, wv, wo
	perBlock += 3 * 2 * R * (2*d*h + h*d) // GLU: w1, w2, w3
	nf := float64(n)
	bf := float64(B)
	perBlock += 3 * 6 * bf * e * (nf + 1) // complex products
	fftForm := n > 1024 || (fft.Load() == nil && os.Getenv("KERNELKIT_FFT") != "go")
	fd := 0.0 // FD-TNN's coefficient transforms per block
	switch {
	case executed && !fftForm:
		nu, nv, np := float64(n/2+1), float64((n-1)/2+1), float64(n/2+1)
		tr := 2 * (nf + 1) * (nu + nv) * e // one transform
		inv := 2 * 2 * np * (nf + 1) * e   // one inverse
		perBlock += 2*bf*(tr+inv) + 2*2*2*(nf+1)*(2*nf-1)*e
		k := 1.0
		if !cfg.Causal {
			k = 2
		}
		fd = 2 * k * 2 * (2*nf - 1) * (nf + 1) * e // dense products and their gradient
	case executed:
		perBlock += (4*bf*e + 2*e) * rfftFLOPs(fftSize(n))
		fd = 2 * e * rfftFLOPs(2*n)
	default:
		perBlock += (4*bf*e + 2*e) * rfftFLOPs(2*n)
		fd = 2 * e * rfftFLOPs(2*n)
	}
	if cfg.Kind == arch.KindFDTNN {
		perBlock += fd
	}
	return float64(cfg.Depth)*perBlock + 3*2*bf*d*float64(cfg.Classes)
}

// fftSize is the engine's FFT size for length n (native/toeplitz.go): the
// smallest even N ≥ 2n − 1 with prime factors 2, 3 and 5.
func fftSize(n int) int {
	for N := max(2*n-1, 2); ; N++ {
		m := N
		for _, p := range []int{2, 3, 5} {
			for m%p == 0 {
				m /= p
			}
		}
		if N%2 == 0 && m == 1 {
			return N
		}
	}
}

// sgemmRate measures the float32 GEMM rate (GFLOP/s) of a 2048³ product
// split over two goroutines (the engine's way of using the cores: each
// BLAS call on one thread), and the same per CPU-second (GFLOP per second
// of process CPU time, the rate of one core: with other processes on the
// machine the ratio of two such rates still compares the work done).
func sgemmRate(b *testing.B) (wall, perCPU float64) {
	const n = 2048
	a := make([]float32, n*n)
	w := make([]float32, n*n)
	c := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7) - 3
		w[i] = float32(i%5) - 2
	}
	impl := blas32.Implementation()
	run := func() {
		var wg sync.WaitGroup
		for k := 0; k < 2; k++ {
			wg.Go(func() {
				lo := k * n / 2
				impl.Sgemm(blas.NoTrans, blas.NoTrans, n/2, n, n, 1, a[lo*n:], n, w, n, 0, c[lo*n:], n)
			})
		}
		wg.Wait()
	}
	run()
	t0, c0 := time.Now(), native.ProcessCPU()
	const reps = 3
	for i := 0; i < reps; i++ {
		run()
	}
	fl := reps * 2 * n * n * n / 1e9
	wall = fl / time.Since(t0).Seconds()
	if c1 := native.ProcessCPU(); c0 > 0 && c1 > c0 {
		perCPU = fl / (float64(c1-c0) / 1e9)
	}
	return wall, perCPU
}

// BenchmarkFDTNNStep times a float32 training step of the shape
// on the engine and reports its FLOP count, rate, and the SGEMM rate
// measured in the same run, in wall time and per CPU-second (the CPU
// figures compare work done when other processes share the cores).
func BenchmarkFDTNNStep(b *testing.B) {
	cfg, B := benchConfig()
	tr, err := native.New[float32](cfg, native.Options{LR: 1e-3, Warmup: 10, Steps: 1000}, 1)
	if err != nil {
		b.Fatal(err)
	}
	toks, labs := randomBatches(cfg, 4, B, 3)
	if _, err := tr.Step(toks[0], labs[0]); err != nil { // buffers
		b.Fatal(err)
	}
	c0 := native.ProcessCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Step(toks[i%4], labs[i%4]); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.StopTimer()
	cpu := float64(native.ProcessCPU()-c0) / 1e9 / float64(b.N)
	fl, ex := StepFLOPs(cfg, B, false), StepFLOPs(cfg, B, true)
	b.ReportMetric(sec, "s/step")
	b.ReportMetric(cpu, "CPU-s/step")
	b.ReportMetric(fl/1e9, "GFLOP/step")
	b.ReportMetric(fl/sec/1e9, "GFLOP/s")
	b.ReportMetric(fl/cpu/1e9, "GFLOP/CPU-s")
	b.ReportMetric(ex/1e9, "executed-GFLOP/step")
	b.ReportMetric(ex/sec/1e9, "executed-GFLOP/s")
	wall, perCPU := sgemmRate(b)
	b.ReportMetric(wall, "SGEMM-GFLOP/s")
	b.ReportMetric(perCPU, "SGEMM-GFLOP/CPU-s")
}

// BenchmarkFDTNNStepGoMLX times the same step on package train's GoMLX
// path (default backend, the pure-Go one), for the side-by-side figure.
func BenchmarkFDTNNStepGoMLX(b *testing.B) {
	cfg, B := benchConfig()
	toks, labs := randomBatches(cfg, 4, B, 3)
	var data []train.Example
	for i, tk := range toks {
		for r := 0; r < B; r++ {
			data = append(data, train.Example{Tokens: tk[r*cfg.Length : (r+1)*cfg.Length], Label: int(labs[i][r])})
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var t0 time.Time
	var c0 int64
	var sec, cpu float64
	tc := train.Config{Model: cfg, Steps: 1 << 20, Batch: B, LR: 1e-3, Warmup: 10, Seed: 1, Device: nn.DefaultBackend,
		Progress: func(p train.Progress) {
			switch p.Step {
			case 1: // the first step compiles the graph
				t0, c0 = time.Now(), native.ProcessCPU()
			case 1 + b.N:
				sec = time.Since(t0).Seconds() / float64(b.N)
				cpu = float64(native.ProcessCPU()-c0) / 1e9 / float64(b.N)
				cancel()
			}
		}}
	tr, err := train.New(tc)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Fit(ctx, data, nil); !errors.Is(err, context.Canceled) {
		b.Fatalf("fit: %v", err)
	}
	b.ReportMetric(sec, "s/step")
	b.ReportMetric(cpu, "CPU-s/step")
	b.ReportMetric(StepFLOPs(cfg, B, false)/sec/1e9, "GFLOP/s")
}

// BenchmarkKindsStep reports steps/s of a float32 training step of every
// model kind at width 64, depth 4, batch 16 (the ListOps replication's
// shape) for L = 512 and L = 2000 (the SKI-TNN paper's speed comparison).
func BenchmarkKindsStep(b *testing.B) {
	for _, L := range []int{512, 2000} {
		for _, kind := range arch.Kinds {
			b.Run(fmt.Sprintf("L=%d/%s", L, kind), func(b *testing.B) {
				cfg := arch.ModelConfig{Kind: kind, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: L, Width: 64, Depth: 4}
				cfg.Defaults()
				if err := cfg.Validate(); err != nil {
					b.Skip(err)
				}
				tr, err := native.New[float32](cfg, native.Options{LR: 1e-3, Warmup: 10, Steps: 1000}, 1)
				if err != nil {
					b.Fatal(err)
				}
				toks, labs := randomBatches(cfg, 2, 16, 3)
				if _, err := tr.Step(toks[0], labs[0]); err != nil {
					b.Fatal(err)
				}
				c0 := native.ProcessCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := tr.Step(toks[i%2], labs[i%2]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
				b.ReportMetric(float64(native.ProcessCPU()-c0)/1e9/float64(b.N), "CPU-s/step")
			})
		}
	}
}

// BenchmarkToeplitzForms times the forward and backward Toeplitz product
// of a float32 batch of 16 sequences of 128 channels in each form (dense
// DFT products through the BLAS, gonum's FFT, FFTW) for n = 256 … 2048:
// the measurement behind the choice of form (native/toeplitz.go).
func BenchmarkToeplitzForms(b *testing.B) {
	native.BenchToeplitzForms(b)
}

// BenchmarkReplicationStep times a float32 step of the L = 512 ListOps
// replication's shape (width 64, depth 4, batch 32: scripts/
// train_replications.sh long) for every kind and reports the minutes a
// 5000-step run (LRA's budget) takes at that rate, evaluations excluded.
func BenchmarkReplicationStep(b *testing.B) {
	for _, kind := range arch.Kinds {
		b.Run(kind, func(b *testing.B) {
			cfg := arch.ModelConfig{Kind: kind, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: 512, Width: 64, Depth: 4,
				SKIRank: 32, SKIFilter: 16, Features: 32}
			cfg.Defaults()
			if err := cfg.Validate(); err != nil {
				b.Skip(err)
			}
			tr, err := native.New[float32](cfg, native.Options{LR: 1e-3, Warmup: 10, Steps: 1000, Redraw: 100}, 1)
			if err != nil {
				b.Fatal(err)
			}
			toks, labs := randomBatches(cfg, 2, 32, 3)
			if _, err := tr.Step(toks[0], labs[0]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Step(toks[i%2], labs[i%2]); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(sec, "s/step")
			b.ReportMetric(5000*sec/60, "min/5000-steps")
		})
	}
}
