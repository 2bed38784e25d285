package kkbeam

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/backend"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf((*Batch)(nil)).Elem(), EncodeBatch, DecodeBatch)
	beam.RegisterCoder(reflect.TypeOf((*Stats)(nil)), EncodeStats, DecodeStats)
	beam.RegisterCoder(reflect.TypeOf((*Prep)(nil)), EncodePrep, DecodePrep)
	beam.RegisterType(reflect.TypeOf((*BadRow)(nil)).Elem())

	register.DoFn4x1[context.Context, fileio.ReadableFile, func(Batch), func(BadRow), error](&readFn{})
	register.Emitter1[Batch]()
	register.Emitter1[BadRow]()
	register.Combiner2[*Prep, Batch](&prepFn{})
	register.Combiner2[*Stats, Batch](&statsFn{})
	register.Combiner1[*Stats](&mergeFn{})
	register.DoFn1x2[Batch, int, Batch](&fanoutFn{})
	register.DoFn2x1[context.Context, *Prep, error](&writePrepFn{})
	register.DoFn2x1[context.Context, *Stats, error](&writeStatsFn{})
	register.DoFn3x1[context.Context, int, func(*BadRow) bool, error](&writeBadFn{})
	register.Iter1[BadRow]()
	register.DoFn4x1[context.Context, fileio.ReadableFile, func(*Summary), func(BadRow), error](&predictFn{})
	register.Emitter1[*Summary]()
	register.Combiner1[*Summary](&summaryFn{})
	register.DoFn2x1[context.Context, *Summary, error](&writeSummaryFn{})
	beam.RegisterCoder(reflect.TypeOf((*Summary)(nil)), EncodeSummary, DecodeSummary)
}

// BLAS selection is process-wide; a process makes it once, from the
// first non-empty name.
var blasOnce sync.Once

// UseBLAS selects the BLAS backend by name as kernelkit's --blas does:
// "auto" (OpenBLAS if it loads, else pure Go), "openblas" or "gonum"; ""
// leaves the backend as it is. Only the first call with a name has an
// effect. Workers call it with RunOptions.BLAS before computing; with an
// in-process runner they share the calling program's backend, which is
// why the default, "", leaves it alone.
func UseBLAS(name string) (err error) {
	if err := checkBLAS(name); err != nil || name == "" {
		return err
	}
	blasOnce.Do(func() {
		switch name {
		case "auto":
			if backend.UseOpenBLAS() != nil {
				backend.UseGonum()
			}
		case "openblas":
			err = backend.UseOpenBLAS()
		case "gonum":
			backend.UseGonum()
		}
	})
	return err
}

// readFn reads one file into batches (see ReadFile). Bad rows go to the
// second output; an error of the file as a whole becomes a batch with
// FileErr set, so that the driver reports it like a bad row; a failed read
// fails the bundle, which the runner retries.
type readFn struct {
	Src Source
}

func (f *readFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(Batch), bad func(BadRow)) error {
	name := file.Metadata.Path
	rc, err := file.Open(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	err = ReadFile(name, rc, f.Src, func(b *Batch) error { emit(*b); return nil },
		func(r *BadRow) error { bad(*r); return nil })
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", name, cerr)
	}
	var fe *FileError
	if errors.As(err, &fe) {
		emit(Batch{File: name, FileErr: fe.Err.Error()})
		return nil
	}
	return err
}

// prepFn combines the first pass: Prep over batches.
type prepFn struct{}

func (prepFn) CreateAccumulator() *Prep { return &Prep{} }
func (prepFn) AddInput(p *Prep, b Batch) *Prep {
	p.Add(&b)
	return p
}
func (prepFn) MergeAccumulators(a, b *Prep) *Prep {
	a.Merge(b)
	return a
}
func (prepFn) ExtractOutput(p *Prep) *Prep { return p }

// MapConfig is a feature map in the serialised configuration of a DoFn:
// the kind and spec of features.Encode, decoded by package catalog's
// registry as model files are, so that workers rebuild the very map the
// driver drew and never sample one.
type MapConfig struct {
	Kind string
	Spec json.RawMessage
}

// NewMapConfig encodes t.
func NewMapConfig(t features.Transformer) (MapConfig, error) {
	kind, spec, err := features.Encode(t)
	return MapConfig{Kind: kind, Spec: spec}, err
}

// Decode rebuilds the map.
func (c MapConfig) Decode() (features.Transformer, error) {
	return catalog.Default().Decode(c.Kind, c.Spec)
}

// statsFn combines the second pass: each batch is standardised, mapped to
// features and added to the ridge statistics of its rows' folds.
type statsFn struct {
	Map    MapConfig
	Scaler *data.Scaler
	// Classes is the number of classes (one-hot targets), 0 for
	// regression.
	Classes int
	// Folds is the number of k-fold partitions (1 without k-fold); row r of
	// file f, counted over good rows, goes to fold (Offsets[f] + r) mod
	// Folds: its index in the files' concatenation in name order.
	Folds   int
	Offsets map[string]int64
	BLAS    string

	t   features.Transformer
	buf []float64
}

func (f *statsFn) Setup() error {
	if err := UseBLAS(f.BLAS); err != nil {
		return err
	}
	var err error
	f.t, err = f.Map.Decode()
	return err
}

func (f *statsFn) CreateAccumulator() *Stats { return &Stats{} }

func (f *statsFn) AddInput(s *Stats, b Batch) (*Stats, error) {
	if b.FileErr != "" {
		return nil, fmt.Errorf("%s: %s", b.File, b.FileErr)
	}
	s.Bad += b.Bad
	n := b.Rows()
	if n == 0 {
		return s, nil
	}
	if f.t == nil {
		if err := f.Setup(); err != nil {
			return nil, err
		}
	}
	d, dim := f.t.InputDim(), f.t.Dim()
	if b.Cols != d {
		return nil, fmt.Errorf("%s: a batch of width %d for a map of %d inputs", b.File, b.Cols, d)
	}
	k := max(f.Classes, 1)
	folds := max(f.Folds, 1)
	if len(s.Folds) == 0 {
		s.Folds = make([]*linear.Stats, folds)
		for i := range s.Folds {
			s.Folds[i] = linear.NewStats(dim, k)
		}
	}
	x := mat.NewDense(n, d, b.X)
	if f.Scaler != nil {
		var err error
		if x, err = f.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	if _, err := limits.Matrix("kkbeam: feature batch", n, dim); err != nil {
		return nil, err
	}
	if len(f.buf) < n*dim {
		f.buf = make([]float64, n*dim)
	}
	z := mat.NewDense(n, dim, f.buf[:n*dim])
	if err := f.t.Transform(z, x); err != nil {
		return nil, fmt.Errorf("%s: lines %d to %d: %w", b.File, b.Lines[0], b.Lines[n-1], err)
	}
	y, err := targets(b.Y, f.Classes)
	if err != nil {
		return nil, fmt.Errorf("%s: lines %d to %d: %w", b.File, b.Lines[0], b.Lines[n-1], err)
	}
	s.Rows += int64(n)
	if folds == 1 {
		return s, s.Folds[0].Add(z, y)
	}
	// Rows i, i+folds, … of the batch share a fold: gather each set and
	// add it with one product.
	first := (f.Offsets[b.File] + b.Start) % int64(folds)
	for j := 0; j < folds && j < n; j++ {
		rows := (n - j + folds - 1) / folds
		zf := mat.NewDense(rows, dim, nil)
		yf := mat.NewDense(rows, k, nil)
		for r := range rows {
			zf.SetRow(r, z.RawRowView(j+r*folds))
			yf.SetRow(r, y.RawRowView(j+r*folds))
		}
		if err := s.Folds[(first+int64(j))%int64(folds)].Add(zf, yf); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (f *statsFn) MergeAccumulators(a, b *Stats) (*Stats, error) { return a, a.Merge(b) }
func (f *statsFn) ExtractOutput(s *Stats) *Stats                 { return s }

// targets returns the n×K one-hot targets of class labels y (classes > 0)
// or the n×1 regression targets.
func targets(y []float64, classes int) (*mat.Dense, error) {
	if y == nil {
		return nil, errors.New("the rows have no target column")
	}
	if classes == 0 {
		return mat.NewDense(len(y), 1, slices.Clone(y)), nil
	}
	labels := make([]int, len(y))
	for i, v := range y {
		labels[i] = int(v)
	}
	return linear.OneHot(labels, classes)
}

// mergeFn merges the partial statistics of the fan-out keys: the upper
// level of the combining tree.
type mergeFn struct{}

func (mergeFn) MergeAccumulators(a, b *Stats) (*Stats, error) { return a, a.Merge(b) }

// fanoutFn keys each batch by one of Fanout keys (a hash of its file and
// first row), so that CombinePerKey merges the statistics of the batches
// in Fanout parallel groups before the final merge.
type fanoutFn struct {
	Fanout int
}

func (f *fanoutFn) ProcessElement(b Batch) (int, Batch) {
	h := fnv.New64a()
	h.Write([]byte(b.File))
	return int((h.Sum64() + uint64(b.Start)) % uint64(max(f.Fanout, 1))), b
}

// writePrepFn and writeStatsFn write the combined statistics of a pass to
// Path, where the driver reads them.
type writePrepFn struct{ Path string }

func (f *writePrepFn) ProcessElement(ctx context.Context, p *Prep) error {
	b, err := EncodePrep(p)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

type writeStatsFn struct{ Path string }

func (f *writeStatsFn) ProcessElement(ctx context.Context, s *Stats) error {
	b, err := EncodeStats(s)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// writeBadFn writes the dead-letter rows, sorted by file and line, as CSV
// with the header file,line,error,text.
type writeBadFn struct{ Path string }

func (f *writeBadFn) ProcessElement(ctx context.Context, _ int, rows func(*BadRow) bool) error {
	var all []BadRow
	var r BadRow
	for rows(&r) {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b BadRow) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return int(a.Line - b.Line)
	})
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { return writeBadRows(w, all) })
}

// writeBadRows writes the dead-letter CSV.
func writeBadRows(w io.Writer, rows []BadRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"file", "line", "error", "text"}); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write([]string{r.File, strconv.FormatInt(r.Line, 10), r.Err, r.Text}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeAtomic writes path through Beam's file systems (local paths, gs://
// and the others registered): to a temporary name beside it, renamed over
// path once complete, so that a reader never sees a partial file.
func writeAtomic(ctx context.Context, path string, fn func(w io.Writer) error) (err error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer closeFS(fs, &err)
	tmp := path + ".tmp-" + strconv.FormatUint(tmpSeq(), 36)
	w, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	err = fn(w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = filesystem.Rename(ctx, fs, tmp, path)
	}
	if err != nil {
		if rm, ok := fs.(filesystem.Remover); ok {
			err = errors.Join(err, ignoreMissing(rm.Remove(ctx, tmp)))
		}
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// ignoreMissing drops the error of removing a file that is not there.
func ignoreMissing(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// tmpSeq returns a random number for temporary file names.
func tmpSeq() uint64 { return rand.Uint64() }
