package train

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/arch"
)

// AnalogConfig configures EvaluateAnalog: the emulated accelerator and its
// calibration.
type AnalogConfig struct {
	// Hardware is the emulated chip (analog.Ideal(), analog.PCM(seed), or
	// any analog.Config); layer l's crossbar uses Hardware.Seed + l.
	Hardware analog.Config
	// Calibration holds the examples whose feature-map inputs calibrate
	// the crossbars (input ranges, column scales, the affine correction):
	// the analog paper calibrates on 2000 training inputs. Required.
	Calibration []Example
	// Rows is the number of feature-map input rows (queries and keys,
	// every head) kept per layer for the calibration, spread evenly over
	// those the calibration examples produce (default 2000).
	Rows int
}

// EvaluateAnalog returns the accuracy and mean cross-entropy on set of the
// model with the random-feature projections x·Ωᵀ of its FAVOR+ attention
// layers computed on emulated analog in-memory crossbars (package analog)
// — the analog paper's "attention on chip" setting (Table I): Ω of each
// layer programmed on its own crossbar, everything else digital. It needs
// the native engine and a performer whose features are FAVOR+'s positive
// features of a fixed Ω (feature maps favor+ and simrf; oprf and sderf
// refit their projection to every batch, which a programmed crossbar
// cannot follow). The model's state is unchanged afterwards.
func (t *Trainer) EvaluateAnalog(set []Example, ac AnalogConfig) (acc, loss float64, err error) {
	if t.nat == nil {
		return 0, 0, errors.New("train: analog evaluation needs the native engine (--device cpu)")
	}
	m := t.cfg.Model
	if m.Kind != arch.KindPerformer {
		return 0, 0, fmt.Errorf("train: analog evaluation needs a performer, not %s", m.Kind)
	}
	if arch.FittedFamily(m.FeatureMap) {
		return 0, 0, fmt.Errorf("train: analog evaluation needs a fixed projection (feature maps favor+ or simrf), not %s", m.FeatureMap)
	}
	if len(ac.Calibration) == 0 {
		return 0, 0, errors.New("train: analog evaluation needs calibration examples")
	}
	if err := t.checkExamples(ac.Calibration, "calibration"); err != nil {
		return 0, 0, err
	}
	rows := ac.Rows
	if rows <= 0 {
		rows = 2000
	}
	// Pass 1: record the feature-map inputs of the calibration examples,
	// the products exact.
	rec := &recorder{}
	if err := t.nat.SetFeatureProjection(rec.project); err != nil {
		return 0, 0, err
	}
	defer func() {
		if e := t.nat.SetFeatureProjection(nil); e != nil && err == nil {
			err = e
		}
	}()
	if _, err := t.Predict(ac.Calibration); err != nil {
		return 0, 0, err
	}
	// Program one crossbar per layer on its Ω.
	bars := make([]*analog.Crossbar, len(rec.layers))
	for l, lr := range rec.layers {
		if lr.rowsSeen == 0 {
			continue
		}
		calib := lr.sample(rows)
		w := mat.NewDense(lr.m, lr.d, append([]float64(nil), lr.omega...))
		hw := ac.Hardware
		hw.Seed += uint64(l)
		if bars[l], err = analog.Program(w, calib, hw); err != nil {
			return 0, 0, fmt.Errorf("train: programming layer %d: %w", l, err)
		}
	}
	// Pass 2: evaluate with the crossbars' projections.
	var mu sync.Mutex
	var perr error
	err = t.nat.SetFeatureProjection(func(layer int, omega, dst, x []float32, n, d, mm int) {
		cb := bars[layer]
		xd := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				xd.Set(i, j, float64(x[i*d+j]))
			}
		}
		out := mat.NewDense(n, mm, nil)
		if cb == nil {
			mu.Lock()
			perr = fmt.Errorf("train: layer %d saw no calibration input", layer)
			mu.Unlock()
			return
		}
		if e := cb.Project(out, xd); e != nil {
			mu.Lock()
			perr = e
			mu.Unlock()
			return
		}
		for i := 0; i < n; i++ {
			for j := 0; j < mm; j++ {
				dst[i*mm+j] = float32(out.At(i, j))
			}
		}
	})
	if err != nil {
		return 0, 0, err
	}
	acc, loss, err = t.Evaluate(set)
	if err == nil && perr != nil {
		err = perr
	}
	return acc, loss, err
}

// recorder is the calibration pass's projection: the exact product, the
// inputs kept per layer.
type recorder struct {
	mu     sync.Mutex
	layers []*layerRecord
}

// layerRecord holds one layer's Ω and the inputs it saw.
type layerRecord struct {
	m, d     int
	omega    []float64
	inputs   [][]float32 // the calls' inputs in arrival order
	rowsSeen int
}

func (r *recorder) project(layer int, omega, dst, x []float32, n, d, m int) {
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float32
			for k := 0; k < d; k++ {
				s += x[i*d+k] * omega[j*d+k]
			}
			dst[i*m+j] = s
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.layers) <= layer {
		r.layers = append(r.layers, &layerRecord{})
	}
	lr := r.layers[layer]
	if lr.omega == nil {
		lr.m, lr.d = m, d
		lr.omega = make([]float64, m*d)
		for i, v := range omega[:m*d] {
			lr.omega[i] = float64(v)
		}
	}
	lr.inputs = append(lr.inputs, append([]float32(nil), x[:n*d]...))
	lr.rowsSeen += n
}

// sample returns a pseudo-random subset of up to k of the recorded rows:
// those with the smallest hashes of their bits, so the choice depends on
// the rows alone, not on the order in which parallel heads delivered them.
func (lr *layerRecord) sample(k int) *mat.Dense {
	type keyed struct {
		h   uint64
		row []float32
	}
	all := make([]keyed, 0, lr.rowsSeen)
	for _, in := range lr.inputs {
		for i := 0; i+lr.d <= len(in); i += lr.d {
			row := in[i : i+lr.d]
			h := fnv.New64a()
			var b [4]byte
			for _, v := range row {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				h.Write(b[:]) // a hash.Hash never returns an error
			}
			all = append(all, keyed{h.Sum64(), row})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return slices.Compare(a.row, b.row)
	})
	k = min(k, len(all))
	out := mat.NewDense(k, lr.d, nil)
	for i := 0; i < k; i++ {
		for j, v := range all[i].row {
			out.Set(i, j, float64(v))
		}
	}
	return out
}
