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

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf((*Batch)(nil)).Elem(), EncodeBatch, DecodeBatch)
	beam.RegisterCoder(reflect.TypeOf((*Stats)(nil)), EncodeStats, DecodeStats)
	beam.RegisterCoder(reflect.TypeOf((*Prep)(nil)), EncodePrep, DecodePrep)
	beam.RegisterCoder(reflect.TypeOf((*Scores)(nil)), EncodeScores, DecodeScores)
	beam.RegisterType(reflect.TypeOf((*BadRow)(nil)).Elem())

	register.DoFn4x1[context.Context, fileio.ReadableFile, func(Batch), func(BadRow), error](&readFn{})
	register.Emitter1[Batch]()
	register.Emitter1[BadRow]()
	register.Combiner2[*Prep, Batch](&prepFn{})
	register.Combiner2[*Stats, Batch](&statsFn{})
	register.Combiner2[*Scores, Batch](&scoresFn{})
	register.DoFn2x1[context.Context, *Scores, error](&writeScoresFn{})
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
			if blas.UseOpenBLAS() != nil {
				blas.UseGonum()
			}
		case "openblas":
			err = blas.UseOpenBLAS()
		case "gonum":
			blas.UseGonum()
		}
	})
	return err
}

// readFn reads one file into batches (see ReadInput). Bad rows go to the
// second output; an error of the file as a whole becomes a batch with
// FileErr set, so that the driver reports it like a bad row; a failed read
// fails the bundle, which the runner retries.
type readFn struct {
	Src Source
}

func (f *readFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(Batch), bad func(BadRow)) error {
	name := file.Metadata.Path
	err := ReadInput(ctx, file, f.Src, func(b *Batch) error { emit(*b); return nil },
		func(r *BadRow) error { bad(*r); return nil })
	var fe *FileError
	if errors.As(err, &fe) {
		emit(Batch{File: name, FileErr: fe.Err.Error()})
		return nil
	}
	return err
}

// prepFn combines the first pass: Prep over batches, with the census of
// a fit of Task (model.Auto when the rows decide it), standardised or
// not.
type prepFn struct {
	Task        model.Task
	Standardize bool
}

func (f *prepFn) CreateAccumulator() (*Prep, error) { return newPrep(f.Task, f.Standardize) }
func (f *prepFn) AddInput(p *Prep, b Batch) (*Prep, error) {
	return p, p.Add(&b, f.Task, f.Standardize)
}
func (f *prepFn) MergeAccumulators(a, b *Prep) (*Prep, error) { return a, a.Merge(b) }
func (f *prepFn) ExtractOutput(p *Prep) *Prep                 { return p }

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

// rowsFn is what the second and third passes share: the plan of the fit
// (model.Plan: task, classes, scaler, folds), its feature map, and where
// each file's rows begin in the files' concatenation in name order — the
// global row order of model.Fit on that concatenation, which places the
// k-fold and the stratified folds of a calibration.
type rowsFn struct {
	Map  MapConfig
	Plan *model.Plan
	// Offsets holds the rows of the files before each file; Before, for a
	// calibration, the rows of each class in the files before it.
	Offsets map[string]int64
	Before  map[string][]int64 `json:",omitempty"`
	BLAS    string

	t features.Transformer
}

func (f *rowsFn) setup() error {
	if f.t != nil {
		return nil
	}
	if err := UseBLAS(f.BLAS); err != nil {
		return err
	}
	var err error
	f.t, err = f.Map.Decode()
	return err
}

// rows prepares the rows of b (model.Plan.Prepare) and returns them with
// the index of their first row among all the rows.
func (f *rowsFn) rows(b *Batch) (*model.Rows, int, error) {
	if b.FileErr != "" {
		return nil, 0, fmt.Errorf("%s: %s", b.File, b.FileErr)
	}
	if err := f.setup(); err != nil {
		return nil, 0, err
	}
	n := b.Rows()
	if b.Cols != f.Plan.Cols {
		return nil, 0, fmt.Errorf("%s: a batch of width %d for a fit of %d columns", b.File, b.Cols, f.Plan.Cols)
	}
	first := f.Offsets[b.File] + b.Start
	var before []int
	if f.Plan.Strata != nil {
		// The rows of positive weight of each class before the batch, then
		// (with weights) those of weight zero: the rest of the rows
		// before it, as a calibration has no class of weight zero.
		before = make([]int, f.Plan.Classes, f.Plan.Classes+1)
		pos := 0
		for l := range f.Plan.Classes {
			if fb := f.Before[b.File]; l < len(fb) {
				before[l] += int(fb[l])
			}
			if l < len(b.Before) {
				before[l] += int(b.Before[l])
			}
			pos += before[l]
		}
		if f.Plan.Weighted {
			before = append(before, int(first)-pos)
		}
	}
	r, err := f.Plan.Prepare(&data.Batch{X: mat.NewDense(n, b.Cols, b.X), Y: b.Y, Weights: b.Weights, Targets: b.targets()}, int(first), before)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: lines %d to %d: %w", b.File, b.Lines[0], b.Lines[n-1], err)
	}
	return r, int(first), nil
}

// statsFn combines the second pass: each batch is prepared by the plan
// (standardised, one-hot, weighed, given its folds) and its features'
// ridge statistics added to its rows' folds by model.Plan.AddStats.
type statsFn struct {
	rowsFn
}

func (f *statsFn) Setup() error { return f.setup() }

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
	r, first, err := f.rows(&b)
	if err != nil {
		return nil, err
	}
	if len(s.Folds) == 0 {
		if s.Folds, err = f.Plan.NewStats(f.t); err != nil {
			return nil, err
		}
	}
	if err := f.Plan.AddStats(s.Folds, f.t, r, first); err != nil {
		return nil, fmt.Errorf("%s: lines %d to %d: %w", b.File, b.Lines[0], b.Lines[n-1], err)
	}
	s.Rows += int64(n)
	return s, nil
}

func (f *statsFn) MergeAccumulators(a, b *Stats) (*Stats, error) { return a, a.Merge(b) }
func (f *statsFn) ExtractOutput(s *Stats) *Stats                 { return s }

// Scores is the accumulator of a calibration's third pass: the
// out-of-fold scores of the rows (model.ScoredRows, one part per batch)
// and the bad lines skipped, which must match the first pass.
type Scores struct {
	Bad   int64
	Parts []*model.ScoredRows
}

// Merge adds the parts of o.
func (s *Scores) Merge(o *Scores) {
	s.Bad += o.Bad
	s.Parts = append(s.Parts, o.Parts...)
}

// scoresFn combines the third pass: each batch's rows scored by the
// model of the folds other than each row's (model.Plan.Score).
type scoresFn struct {
	rowsFn
	Models []FoldModel

	models []*linear.Model
}

// FoldModel is a ridge model in the serialised configuration of a DoFn.
type FoldModel struct {
	D, K   int
	W, B   []float64
	Lambda float64
}

func (f *scoresFn) Setup() error {
	if err := f.setup(); err != nil {
		return err
	}
	if f.models != nil {
		return nil
	}
	for _, fm := range f.Models {
		if fm.D <= 0 || fm.K <= 0 || len(fm.W) != fm.D*fm.K || len(fm.B) != fm.K {
			return errors.New("kkbeam: a fold model of the wrong size")
		}
		f.models = append(f.models, &linear.Model{W: mat.NewDense(fm.D, fm.K, fm.W), B: fm.B, Lambda: fm.Lambda})
	}
	return nil
}

func (f *scoresFn) CreateAccumulator() *Scores { return &Scores{} }

func (f *scoresFn) AddInput(s *Scores, b Batch) (*Scores, error) {
	if b.FileErr != "" {
		return nil, fmt.Errorf("%s: %s", b.File, b.FileErr)
	}
	s.Bad += b.Bad
	n := b.Rows()
	if n == 0 {
		return s, nil
	}
	if err := f.Setup(); err != nil {
		return nil, err
	}
	r, first, err := f.rows(&b)
	if err != nil {
		return nil, err
	}
	part, err := f.Plan.Score(context.Background(), f.t, f.models, r, first)
	if err != nil {
		return nil, fmt.Errorf("%s: lines %d to %d: %w", b.File, b.Lines[0], b.Lines[n-1], err)
	}
	s.Parts = append(s.Parts, part)
	return s, nil
}

func (f *scoresFn) MergeAccumulators(a, b *Scores) *Scores {
	a.Merge(b)
	return a
}
func (f *scoresFn) ExtractOutput(s *Scores) *Scores { return s }

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

type writeScoresFn struct{ Path string }

func (f *writeScoresFn) ProcessElement(ctx context.Context, s *Scores) error {
	b, err := EncodeScores(s)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

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
