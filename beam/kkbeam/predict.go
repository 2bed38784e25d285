package kkbeam

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// Summary counts what a prediction pipeline did: files, rows predicted,
// bad rows (and the first, in file and line order), an error of a whole
// file, and for labelled rows the correct classes or the squared error.
type Summary struct {
	Files, Rows, Bad int64
	FirstBad         *BadRow
	FileErr          *BadRow
	Labelled         int64
	Correct          int64
	SSE              float64
}

// Merge adds o into s.
func (s *Summary) Merge(o *Summary) {
	s.Files += o.Files
	s.Rows += o.Rows
	s.Bad += o.Bad
	if o.FirstBad.before(s.FirstBad) {
		s.FirstBad = o.FirstBad
	}
	if o.FileErr.before(s.FileErr) {
		s.FileErr = o.FileErr
	}
	s.Labelled += o.Labelled
	s.Correct += o.Correct
	s.SSE += o.SSE
}

// EncodeSummary and DecodeSummary are the Beam coder of Summary (JSON).
func EncodeSummary(s *Summary) ([]byte, error) { return json.Marshal(s) }

// DecodeSummary decodes a Summary encoded by EncodeSummary.
func DecodeSummary(b []byte) (*Summary, error) {
	s := &Summary{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("kkbeam: prediction summary: %w", err)
	}
	return s, nil
}

// summaryFn merges the summaries of the files.
type summaryFn struct{}

func (summaryFn) MergeAccumulators(a, b *Summary) *Summary {
	a.Merge(b)
	return a
}

type writeSummaryFn struct{ Path string }

func (f *writeSummaryFn) ProcessElement(ctx context.Context, s *Summary) error {
	b, err := EncodeSummary(s)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, f.Path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// OutputPath returns the prediction file of input file name: its base
// name with ".pred.csv" appended, in dir.
func OutputPath(dir, name string) string {
	return strings.TrimSuffix(dir, "/") + "/" + path.Base(name) + ".pred.csv"
}

// predictFn predicts the rows of one file (CSV, LIBSVM or Parquet: see
// ReadInput) with a model (see PredictFile).
type predictFn struct {
	Model      []byte // the model file
	Src        Source
	OutDir     string
	Scores     bool
	DeadLetter bool
	BLAS       string

	m *model.Model
}

func (f *predictFn) Setup() error {
	if err := UseBLAS(f.BLAS); err != nil {
		return err
	}
	var err error
	f.m, err = model.LoadWith(bytes.NewReader(f.Model), catalog.Default())
	return err
}

func (f *predictFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit func(*Summary), bad func(BadRow)) error {
	if f.m == nil {
		if err := f.Setup(); err != nil {
			return err
		}
	}
	name := file.Metadata.Path
	read := func(emit func(*Batch) error, bad func(*BadRow) error) error {
		return ReadInput(ctx, file, f.Src, emit, bad)
	}
	s, err := predictBatches(ctx, f.m, name, read, OutputPath(f.OutDir, name), f.Scores, f.DeadLetter,
		func(r *BadRow) { bad(*r) })
	if err != nil {
		return err
	}
	emit(s)
	return nil
}

// errStop stops reading a file whose predictions will not be written.
var errStop = errors.New("kkbeam: stop")

// PredictFile predicts the rows of the file name read from r with m and
// writes them to out (atomically, through Beam's file systems) as CSV:
// file,line,prediction (the class index, or the regression value), then
// score0… with scores for classification. Rows keep the file's order. A
// bad row is passed to bad; without deadLetter it stops the file, which
// then gets no output, and the summary holds the row. An error of the
// whole file is likewise returned in the summary; only failed reads and
// writes are errors.
func PredictFile(ctx context.Context, m *model.Model, name string, r io.Reader, src Source, out string,
	scores, deadLetter bool, bad func(*BadRow)) (*Summary, error) {
	read := func(emit func(*Batch) error, bad func(*BadRow) error) error { return ReadFile(name, r, src, emit, bad) }
	return predictBatches(ctx, m, name, read, out, scores, deadLetter, bad)
}

// predictBatches is PredictFile over the batches read gives (ReadFile's,
// or ReadInput's, which reads Parquet files as well).
func predictBatches(ctx context.Context, m *model.Model, name string, read func(emit func(*Batch) error, bad func(*BadRow) error) error,
	out string, scores, deadLetter bool, bad func(*BadRow)) (*Summary, error) {
	s := &Summary{Files: 1}
	classify := m.Task == model.Classification
	var key bytes.Buffer
	kw := csv.NewWriter(&key)
	if err := kw.Write([]string{name}); err != nil {
		return nil, err
	}
	kw.Flush()
	file := bytes.TrimSuffix(key.Bytes(), []byte("\n"))
	var readErr error
	err := writeAtomic(ctx, out, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		head := "file,line,prediction"
		if scores && classify {
			for j := range m.Classes {
				head += ",score" + strconv.Itoa(j)
			}
		}
		if _, err := bw.WriteString(head + "\n"); err != nil {
			return err
		}
		line := make([]byte, 0, 256)
		emit := func(b *Batch) error {
			n := b.Rows()
			if n == 0 {
				return nil
			}
			x := mat.NewDense(n, b.Cols, b.X)
			sc, err := m.Predict(x)
			if err != nil {
				return &FileError{name, fmt.Errorf("lines %d to %d: %w", b.Lines[0], b.Lines[n-1], err)}
			}
			_, k := sc.Dims()
			var pred []int
			if classify {
				pred = linear.Argmax(sc)
			}
			for i := range n {
				line = append(append(line[:0], file...), ',')
				line = strconv.AppendInt(line, b.Lines[i], 10)
				line = append(line, ',')
				if classify {
					line = strconv.AppendInt(line, int64(pred[i]), 10)
					for j := 0; scores && j < k; j++ {
						line = strconv.AppendFloat(append(line, ','), sc.At(i, j), 'g', -1, 64)
					}
				} else {
					line = strconv.AppendFloat(line, sc.At(i, 0), 'g', -1, 64)
				}
				if _, err := bw.Write(append(line, '\n')); err != nil {
					return err
				}
				if b.Y != nil {
					s.Labelled++
					if classify {
						if float64(pred[i]) == b.Y[i] {
							s.Correct++
						}
					} else {
						d := sc.At(i, 0) - b.Y[i]
						s.SSE += d * d
					}
				}
			}
			s.Rows += int64(n)
			return nil
		}
		onBad := func(r *BadRow) error {
			s.Bad++
			if r.before(s.FirstBad) {
				s.FirstBad = r
			}
			bad(r)
			if !deadLetter {
				return errStop
			}
			return nil
		}
		if err := read(emit, onBad); err != nil {
			readErr = err
			return errStop
		}
		return bw.Flush()
	})
	var fe *FileError
	switch {
	case errors.As(readErr, &fe):
		s.FileErr = &BadRow{File: name, Err: fe.Err.Error()}
		return s, nil
	case errors.Is(readErr, errStop):
		return s, nil
	case readErr != nil:
		return nil, readErr
	case err != nil:
		return nil, err
	}
	return s, nil
}

// PredictOptions configures Predict.
type PredictOptions struct {
	// Input is the glob of the files to predict (any scheme of Beam's file
	// systems: a local path, gs://…).
	Input string
	// Model is the model file (a local path).
	Model string
	// Format and Label are as for Fit; Label defaults to the model's.
	Format, Label string
	// OutDir receives one prediction file per input file (see OutputPath).
	OutDir string
	// Scores adds the class scores to each prediction.
	Scores bool
	// DeadLetter, if set, is the file that receives the bad rows, which are
	// then left out of the predictions instead of failing them.
	DeadLetter string
	Run        RunOptions
}

// PredictResult reports a prediction run.
type PredictResult struct {
	Files, Rows, Bad int64
	// Labelled is the number of rows with a label; Accuracy or RMSE
	// measure the predictions against them.
	Labelled       int64
	Accuracy, RMSE float64
	Seconds        float64
}

// Predict predicts every row of the files matching opt.Input with the
// model in a Beam pipeline: each file is read in order and its
// predictions are written, keyed by file and line, to
// OutputPath(opt.OutDir, file).
func Predict(ctx context.Context, opt PredictOptions) (*PredictResult, error) {
	start := time.Now()
	raw, err := os.ReadFile(opt.Model)
	if err != nil {
		return nil, err
	}
	m, err := model.LoadWith(bytes.NewReader(raw), catalog.Default())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Model, err)
	}
	if opt.OutDir == "" {
		return nil, errors.New("kkbeam: no output directory for the predictions")
	}
	run, err := opt.Run.start()
	if err != nil {
		return nil, err
	}
	defer run.cleanup()
	paths, err := List(ctx, opt.Input)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, p := range paths {
		out := OutputPath(opt.OutDir, p)
		if q, dup := seen[out]; dup {
			return nil, fmt.Errorf("kkbeam: %s and %s would both write %s; give files distinct base names", q, p, out)
		}
		seen[out] = p
	}
	label := opt.Label
	if label == "" {
		label = m.Label
	}
	src := Source{Format: opt.Format, Label: label, Columns: m.Columns, Width: m.Map.InputDim(), Chunk: opt.Run.Chunk}
	sumPath := run.path("predict.json")
	p, s := beam.NewPipelineWithRoot()
	files := readable(s, paths)
	sums, bads := beam.ParDo2(s, &predictFn{Model: raw, Src: src, OutDir: opt.OutDir, Scores: opt.Scores,
		DeadLetter: opt.DeadLetter != "", BLAS: opt.Run.BLAS}, files)
	total := beam.Combine(s, &summaryFn{}, sums)
	beam.ParDo0(s, &writeSummaryFn{Path: sumPath}, total)
	if opt.DeadLetter != "" {
		writeDeadLetters(s, opt.DeadLetter, bads)
	}
	if err := run.execute(ctx, p); err != nil {
		return nil, err
	}
	b, err := readAll(ctx, sumPath)
	if err != nil {
		return nil, err
	}
	sum, err := DecodeSummary(b)
	if err != nil {
		return nil, err
	}
	if sum.FileErr != nil {
		return nil, sum.FileErr
	}
	if sum.Bad > 0 && opt.DeadLetter == "" {
		return nil, badRowsError(sum.FirstBad, sum.Bad)
	}
	if opt.DeadLetter != "" && sum.Bad == 0 {
		if err := writeAtomic(ctx, opt.DeadLetter, func(w io.Writer) error { return writeBadRows(w, nil) }); err != nil {
			return nil, err
		}
	}
	r := &PredictResult{Files: sum.Files, Rows: sum.Rows, Bad: sum.Bad, Labelled: sum.Labelled}
	if sum.Labelled > 0 {
		r.Accuracy = float64(sum.Correct) / float64(sum.Labelled)
		r.RMSE = math.Sqrt(sum.SSE / float64(sum.Labelled))
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// badRowsError is the error of a run that met bad rows without a
// dead-letter output: the first bad row, in file and line order, and how
// many there were.
func badRowsError(first *BadRow, n int64) error {
	if n <= 1 {
		return fmt.Errorf("%w (--dead-letter FILE sets bad rows aside instead)", first)
	}
	return fmt.Errorf("%w (and %d more bad rows; --dead-letter FILE sets them aside instead)", first, n-1)
}
