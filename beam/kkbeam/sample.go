package kkbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf((*Sample)(nil)), EncodeSample, DecodeSample)
	register.Combiner2[*Sample, Batch](&sampleFn{})
	register.DoFn2x1[context.Context, *Sample, error](&writeSampleFn{})
}

// SampleMap builds a data-dependent feature map (a Nyström map, whose
// landmarks are rows of the data) on a uniform sample of the training
// rows, as kernelkit fit --stream builds one (model.Job.MapSample): the
// sample is the reservoir (nystrom.Reservoir) of Size rows that a pass
// over the rows in order would keep, with the seed Seed xor model's
// stream sample seed, standardised by the census's scaler when the fit
// standardises. The reservoir's draws depend only on the number of rows,
// so the driver draws them from the census's count, and a pipeline of
// its own fetches the rows drawn. With at most Size rows the sample is
// every row in order: the rows an in-memory kernelkit fit builds the map
// on.
type SampleMap struct {
	// Size is the number of rows sampled (model.Job.MapSample's default:
	// max(10000, 10·features)).
	Size int
	// Seed is the map's seed (features.Options.Seed).
	Seed uint64
	// Build returns the map fitted on the sample (n×d, after the scaler).
	Build func(sample *mat.Dense) (features.Transformer, error)
}

// streamSampleSeed is model.StreamSampleSeed, which kernelkit fit
// --stream xors into the map's seed for its reservoir.
const streamSampleSeed = model.StreamSampleSeed

// sampleIndices returns the rows, counted from 0 over all n rows, that a
// reservoir of size rows with seed keeps, in the order of its sample.
func sampleIndices(n int64, size int, seed uint64) ([]int64, error) {
	rv, err := nystrom.NewReservoir(size, seed)
	if err != nil {
		return nil, err
	}
	// The reservoir's draws do not depend on the rows' values: offering
	// each row's index as a one-column row replays them.
	const block = 1 << 16
	buf := make([]float64, block)
	for lo := int64(0); lo < n; lo += block {
		m := int(min(block, n-lo))
		for i := range m {
			buf[i] = float64(lo + int64(i))
		}
		if err := rv.Add(mat.NewDense(m, 1, buf[:m])); err != nil {
			return nil, err
		}
	}
	s := rv.Sample()
	if s == nil {
		return nil, nil
	}
	raw := s.RawMatrix().Data
	idx := make([]int64, len(raw))
	for i, v := range raw {
		idx[i] = int64(v)
	}
	return idx, nil
}

// Sample is the accumulator of the sample pass: the rows drawn (X, Cols
// wide, row-major) and each one's place in the sample (Slot).
type Sample struct {
	Cols int
	Slot []int
	X    []float64
}

// EncodeSample and DecodeSample are the Beam coder of Sample (JSON, which
// keeps every float64 exactly).
func EncodeSample(s *Sample) ([]byte, error) { return json.Marshal(s) }

// DecodeSample decodes a Sample encoded by EncodeSample.
func DecodeSample(b []byte) (*Sample, error) {
	s := &Sample{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("kkbeam: map sample: %w", err)
	}
	if s.Cols < 0 || len(s.X) != len(s.Slot)*s.Cols {
		return nil, fmt.Errorf("kkbeam: map sample of %d rows, %d values of width %d", len(s.Slot), len(s.X), s.Cols)
	}
	return s, nil
}

// sampleFn combines the sample pass: the rows of each batch that the
// reservoir drew. Want holds, for each file, the drawn rows (good rows
// counted from 0 within the file, ascending) and Slot their places in the
// sample.
type sampleFn struct {
	Want map[string][]int64
	Slot map[string][]int
}

func (f *sampleFn) CreateAccumulator() *Sample { return &Sample{} }

func (f *sampleFn) AddInput(s *Sample, b Batch) (*Sample, error) {
	if b.FileErr != "" {
		return nil, fmt.Errorf("%s: %s", b.File, b.FileErr)
	}
	want := f.Want[b.File]
	n := int64(b.Rows())
	lo := sort.Search(len(want), func(i int) bool { return want[i] >= b.Start })
	for i := lo; i < len(want) && want[i] < b.Start+n; i++ {
		r := int(want[i] - b.Start)
		if s.Cols == 0 {
			s.Cols = b.Cols
		}
		if b.Cols != s.Cols {
			return nil, fmt.Errorf("%s: a batch of width %d in a sample of width %d", b.File, b.Cols, s.Cols)
		}
		s.X = append(s.X, b.X[r*b.Cols:(r+1)*b.Cols]...)
		s.Slot = append(s.Slot, f.Slot[b.File][i])
	}
	return s, nil
}

func (f *sampleFn) MergeAccumulators(a, b *Sample) (*Sample, error) {
	if len(b.Slot) == 0 {
		return a, nil
	}
	if len(a.Slot) == 0 {
		return b, nil
	}
	if a.Cols != b.Cols {
		return nil, fmt.Errorf("kkbeam: merging samples of widths %d and %d", a.Cols, b.Cols)
	}
	a.Slot = append(a.Slot, b.Slot...)
	a.X = append(a.X, b.X...)
	return a, nil
}

func (f *sampleFn) ExtractOutput(s *Sample) *Sample { return s }

// writeSampleFn writes the sample to Path, where the driver reads it.
type writeSampleFn struct{ Path string }

func (f *writeSampleFn) ProcessElement(ctx context.Context, s *Sample) error {
	b, err := EncodeSample(s)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// planSample returns the sample pass's configuration for a reservoir of
// size rows with seed over the files' rows (files: the good rows of each
// file; the files' concatenation in name order is the rows' order), and
// the sample's size.
func planSample(files map[string]int64, size int, seed uint64) (*sampleFn, int, error) {
	var n int64
	names := slices.Sorted(maps.Keys(files))
	starts := make([]int64, len(names))
	for i, f := range names {
		starts[i] = n
		n += files[f]
	}
	idx, err := sampleIndices(n, size, seed)
	if err != nil {
		return nil, 0, err
	}
	type drawn struct {
		local int64
		slot  int
	}
	by := map[string][]drawn{}
	for slot, g := range idx {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > g }) - 1
		by[names[i]] = append(by[names[i]], drawn{g - starts[i], slot})
	}
	fn := &sampleFn{Want: map[string][]int64{}, Slot: map[string][]int{}}
	for f, d := range by {
		slices.SortFunc(d, func(a, b drawn) int { return int(a.local - b.local) })
		for _, x := range d {
			fn.Want[f] = append(fn.Want[f], x.local)
			fn.Slot[f] = append(fn.Slot[f], x.slot)
		}
	}
	return fn, len(idx), nil
}

// matrix returns the sample's rows in the reservoir's order, checking
// that each of the size rows drawn arrived once.
func (s *Sample) matrix(size, cols int) (*mat.Dense, error) {
	if len(s.Slot) != size || (size > 0 && s.Cols != cols) {
		return nil, fmt.Errorf("kkbeam: the sample pass found %d rows of width %d, the reservoir drew %d of width %d: did the input change?",
			len(s.Slot), s.Cols, size, cols)
	}
	if _, err := limits.Matrix("kkbeam: map sample", size, cols); err != nil {
		return nil, err
	}
	x := mat.NewDense(size, cols, nil)
	seen := make([]bool, size)
	for i, slot := range s.Slot {
		if slot < 0 || slot >= size || seen[slot] {
			return nil, fmt.Errorf("kkbeam: the sample pass returned row %d of the sample twice", slot)
		}
		seen[slot] = true
		copy(x.RawRowView(slot), s.X[i*cols:(i+1)*cols])
	}
	return x, nil
}
