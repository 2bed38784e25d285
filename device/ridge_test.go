package device

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// arrDiff returns max|got − want| / max|want| over two arrays, reading
// only the upper triangle of d×d matrices when d > 0.
func arrDiff(got, want []float64, d int) float64 {
	var scale, diff float64
	for i := range want {
		if d > 0 && i%d < i/d {
			continue
		}
		scale = math.Max(scale, math.Abs(want[i]))
		diff = math.Max(diff, math.Abs(got[i]-want[i]))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// statsDiff returns the largest relative difference between two sets of
// statistics, and an error if their row counts differ.
func statsDiff(got, want []*linear.Stats) (float64, error) {
	if len(got) != len(want) {
		return 0, errors.New("different numbers of folds")
	}
	var e float64
	for f := range want {
		g, w := got[f], want[f]
		if g.N != w.N {
			return 0, errors.New("different row counts")
		}
		e = math.Max(e, arrDiff(g.ZtZ, w.ZtZ, w.D))
		for _, p := range [][2][]float64{{g.ZtY, w.ZtY}, {g.SumZ, w.SumZ}, {g.SumY, w.SumY}, {g.SumY2, w.SumY2}} {
			e = math.Max(e, arrDiff(p[0], p[1], 0))
		}
	}
	return e, nil
}

// deviceStats accumulates the statistics of x and y on dev, adding the
// rows in the given pieces.
func deviceStats(t *testing.T, dev *Device, mp features.Transformer, x, y *mat.Dense, folds, batch int, pieces []int) []*linear.Stats {
	t.Helper()
	_, k := y.Dims()
	_, d := x.Dims()
	acc, err := dev.NewRidgeStats(mp, k, folds, RidgeOptions{BatchRows: batch})
	if err != nil {
		t.Fatal(err)
	}
	lo := 0
	for _, p := range pieces {
		if err := acc.Add(context.Background(), x.Slice(lo, lo+p, 0, d).(*mat.Dense), y.Slice(lo, lo+p, 0, k).(*mat.Dense), nil); err != nil {
			t.Fatal(err)
		}
		lo += p
	}
	st, err := acc.Result()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRidgeStats compares the device statistics (ZᵀZ, ZᵀY, Σz, Σy, Σy²,
// N per fold) with model.Accumulate's on the CPU: float64 graphs to
// 1e-12 of each array's scale, float32 graphs within the float32
// tolerance. 203 rows in batches of 16 over 1 and 3 folds exercise full
// batches and a padded last batch per fold.
func TestRidgeStats(t *testing.T) {
	const n, d, D, k = 203, 5, 24, 3
	x := randRows(21, n, d, 0.5, false)
	y := randRows(22, n, k, 1, false)
	for _, name := range []string{"rbf", "positive", "arccos1", "nystrom"} {
		mp := catalogMap(t, name, d, D)
		for _, folds := range []int{1, 3} {
			want, err := model.Accumulate(context.Background(), mp, x, y, folds, 64, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, dev := range testDevices(t) {
				got := deviceStats(t, dev, mp, x, y, folds, 16, []int{n})
				e, err := statsDiff(got, want)
				if err != nil {
					t.Fatalf("%s, %d folds on %v: %v", name, folds, dev, err)
				}
				if tol := tolerance(dev, 1e-12); !(e <= tol) {
					t.Errorf("%s, %d folds on %v: statistics differ from the CPU's by %.3g of their scale, tolerance %.1g", name, folds, dev, e, tol)
				}
			}
		}
	}
}

// TestRidgeStatsReproducible checks that the statistics have the same
// bits on every run and whatever the sizes of the Add calls (rows are
// batched per fold across calls).
func TestRidgeStatsReproducible(t *testing.T) {
	const n, d, D, k = 150, 4, 16, 2
	x := randRows(31, n, d, 0.5, false)
	y := randRows(32, n, k, 1, false)
	mp := catalogMap(t, "rbf", d, D)
	for _, dev := range testDevices(t) {
		a := deviceStats(t, dev, mp, x, y, 2, 32, []int{n})
		b := deviceStats(t, dev, mp, x, y, 2, 32, []int{50, 1, 33, 66})
		for f := range a {
			if !slices.Equal(a[f].ZtZ, b[f].ZtZ) || !slices.Equal(a[f].ZtY, b[f].ZtY) || !slices.Equal(a[f].SumZ, b[f].SumZ) ||
				!slices.Equal(a[f].SumY, b[f].SumY) || !slices.Equal(a[f].SumY2, b[f].SumY2) || a[f].N != b[f].N ||
				a[f].SumW != b[f].SumW || a[f].Weighted != b[f].Weighted {
				t.Errorf("%v: fold %d: statistics differ between one Add and four", dev, f)
			}
		}
	}
}

// TestRidgeStatsErrors checks the accumulator's errors: bad shapes,
// non-finite inputs (then refusal of further work), a cancelled context,
// use after Result, a map without a device form, and overflow.
func TestRidgeStatsErrors(t *testing.T) {
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	mp := catalogMap(t, "rbf", 3, 8)
	ctx := context.Background()
	acc, err := dev.NewRidgeStats(mp, 1, 1, RidgeOptions{BatchRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.Add(ctx, mat.NewDense(2, 4, nil), mat.NewDense(2, 1, nil), nil); err == nil {
		t.Error("Add of 4 columns to a 3-input map succeeded")
	}
	bad := mat.NewDense(2, 3, []float64{0, 0, 0, math.Inf(1), 0, 0})
	if err := acc.Add(ctx, bad, mat.NewDense(2, 1, nil), nil); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("Add of an Inf in row 1 = %v", err)
	}
	if _, err := acc.Result(); err == nil {
		t.Error("Result after a failed Add succeeded")
	}
	acc, err = dev.NewRidgeStats(mp, 1, 1, RidgeOptions{BatchRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := acc.Add(cctx, mat.NewDense(8, 3, nil), mat.NewDense(8, 1, nil), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Add with a cancelled context = %v", err)
	}
	acc, err = dev.NewRidgeStats(mp, 1, 1, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Result(); err != nil {
		t.Errorf("Result of no rows: %v", err)
	}
	if _, err := acc.Result(); err == nil {
		t.Error("second Result succeeded")
	}
	if _, err := dev.NewRidgeStats(catalogMap(t, "poly2", 3, 8), 1, 1, RidgeOptions{}); err == nil {
		t.Error("statistics of a map without a device form succeeded")
	}
	// exp(‖x‖²/2) of the softmax trig map is beyond float64 at ‖x‖² = 2000.
	trig := catalogMap(t, "trig", 3, 8)
	acc, err = dev.NewRidgeStats(trig, 1, 1, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := mat.NewDense(1, 3, []float64{30, 30, 10})
	if err := acc.Add(ctx, big, mat.NewDense(1, 1, nil), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Result(); !errors.Is(err, features.ErrOverflow) {
		t.Errorf("Result of overflowing features = %v, want ErrOverflow", err)
	}
}

var (
	letterOnce          sync.Once
	letterTrain, letter *data.Dataset
	letterErr           error
)

// letterSets returns the first 2000 rows of the UCI letter set for
// training and the next 1000 for testing.
func letterSets(t *testing.T) (train, test *data.Dataset) {
	t.Helper()
	letterOnce.Do(func() {
		ds, err := data.Open("../data/letter.csv", data.OpenOptions{})
		if err != nil {
			letterErr = err
			return
		}
		idx := make([]int, 3000)
		for i := range idx {
			idx[i] = i
		}
		letterTrain, letter = ds.Subset(idx[:2000]), ds.Subset(idx[2000:])
	})
	if letterErr != nil {
		t.Fatal(letterErr)
	}
	return letterTrain, letter
}

// TestFitAccumulator fits ridge classifiers on 2000 rows of the letter
// set with the CPU statistics and with the device's
// (model.Options.Accumulator) and compares the weights and the test
// accuracy on 1000 further rows: float64 statistics give weights equal
// to 1e-9 relative and the same accuracy; float32 ones weights within
// 10⁻² and an accuracy within 0.01. With k-fold selection the chosen λ
// is the same.
func TestFitAccumulator(t *testing.T) {
	train, test := letterSets(t)
	for _, sel := range []string{"", "kfold"} {
		opt := model.Options{Task: model.Classification, Lambda: 1e-2, Select: sel, Folds: 3, Standardize: true,
			Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 256, Seed: 4}}
		cpu, err := model.Fit(context.Background(), opt, train)
		if err != nil {
			t.Fatal(err)
		}
		cpuAcc := accuracy(t, cpu, test)
		for _, dev := range testDevices(t) {
			o := opt
			o.Accumulator = dev.Accumulator(RidgeOptions{BatchRows: 512})
			m, err := model.Fit(context.Background(), o, train)
			if err != nil {
				t.Fatalf("%v: %v", dev, err)
			}
			if m.Linear.Lambda != cpu.Linear.Lambda {
				t.Errorf("select %q on %v: λ = %v, CPU %v", sel, dev, m.Linear.Lambda, cpu.Linear.Lambda)
			}
			wTol, aTol := 1e-9, 0.0
			if dev.Float32() {
				wTol, aTol = 1e-2, 0.01
			}
			e := arrDiff(m.Linear.W.RawMatrix().Data, cpu.Linear.W.RawMatrix().Data, 0)
			if !(e <= wTol) {
				t.Errorf("select %q on %v: weights differ from the CPU fit's by %.3g of their scale, tolerance %.1g", sel, dev, e, wTol)
			}
			if a := accuracy(t, m, test); !(math.Abs(a-cpuAcc) <= aTol) {
				t.Errorf("select %q on %v: test accuracy %.4f, CPU fit %.4f", sel, dev, a, cpuAcc)
			}
		}
	}
}

// accuracy returns m's accuracy on ds.
func accuracy(t *testing.T, m *model.Model, ds *data.Dataset) float64 {
	t.Helper()
	ev, err := m.Evaluate(ds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Accuracy
}

// TestFitDeviceMap fits with a device Map as model.Options.Map (features
// on the device, statistics by kernelkit's CPU accumulator, whose two
// lanes call the map at once): the weights equal the CPU fit's to 1e-9
// in float64, and the model saves under the source map's spec, so that
// the loaded model (with the CPU map) predicts as the fitted one.
func TestFitDeviceMap(t *testing.T) {
	train, test := letterSets(t)
	cfg := features.Config{Kernel: "rbf", Form: "sincos", Gamma: 0.1, Features: 96, Seed: 8}
	opt := model.Options{Task: model.Classification, Lambda: 0.1, Standardize: true, ChunkRows: 256, Features: cfg}
	cpu, err := model.Fit(context.Background(), opt, train)
	if err != nil {
		t.Fatal(err)
	}
	src, err := features.New(cfg, train.Cols())
	if err != nil {
		t.Fatal(err)
	}
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := dev.Map(src)
	if err != nil {
		t.Fatal(err)
	}
	opt.Map = dm
	m, err := model.Fit(context.Background(), opt, train)
	if err != nil {
		t.Fatal(err)
	}
	if e := arrDiff(m.Linear.W.RawMatrix().Data, cpu.Linear.W.RawMatrix().Data, 0); !(e <= 1e-9) {
		t.Errorf("weights with a device map differ from the CPU fit's by %.3g", e)
	}
	var buf strings.Builder
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := model.Load(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := loaded.Map.(*features.Map); !ok {
		t.Errorf("loaded map is %T, want *features.Map", loaded.Map)
	}
	got, err := loaded.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(got, want, nil); !(e <= 1e-12) {
		t.Errorf("loaded model's predictions differ by %.3g", e)
	}
}
