package kkbeam

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// The coders below encode the elements and accumulators that travel
// between Beam workers. Batches and ridge statistics, the bulk of the
// traffic, are little-endian binary (ZᵀZ by its upper triangle only, the
// part linear.Stats references: D(D+1)/2 floats instead of D²); the
// first-pass accumulator, small and irregular, is JSON. Decoders check
// every length against the bytes that remain before allocating.

// codecVersion starts each binary encoding, so that a worker of another
// version fails loudly instead of misreading.
const codecVersion = 3

type enc struct{ b []byte }

func (e *enc) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)   { e.u64(uint64(v)) }
func (e *enc) f64(v float64) { e.u64(math.Float64bits(v)) }
func (e *enc) str(s string)  { e.u64(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) f64s(v []float64) {
	e.u64(uint64(len(v)))
	for _, x := range v {
		e.f64(x)
	}
}
func (e *enc) i64s(v []int64) {
	e.u64(uint64(len(v)))
	for _, x := range v {
		e.i64(x)
	}
}

// nilF64s marks a nil slice (as opposed to an empty one) in f64s.
const nilLen = math.MaxUint64

func (e *enc) f64sOrNil(v []float64) {
	if v == nil {
		e.u64(nilLen)
		return
	}
	e.f64s(v)
}

type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("kkbeam: encoded value is truncated")

func (d *dec) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) i64() int64   { return int64(d.u64()) }
func (d *dec) f64() float64 { return math.Float64frombits(d.u64()) }

// length reads a length of items of size bytes each and checks that they
// fit in what remains.
func (d *dec) length(size int) int {
	n := d.u64()
	if d.err == nil && n > uint64(len(d.b)/size) {
		d.err = errShort
		return 0
	}
	return int(n)
}
func (d *dec) str() string {
	n := d.length(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
func (d *dec) f64s() []float64 {
	n := d.length(8)
	if d.err != nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = d.f64()
	}
	return v
}
func (d *dec) f64sOrNil() []float64 {
	if d.err == nil && len(d.b) >= 8 && binary.LittleEndian.Uint64(d.b) == nilLen {
		d.b = d.b[8:]
		return nil
	}
	return d.f64s()
}
func (d *dec) i64s() []int64 {
	n := d.length(8)
	if d.err != nil {
		return nil
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = d.i64()
	}
	return v
}
func (d *dec) version() {
	if v := d.u64(); d.err == nil && v != codecVersion {
		d.err = fmt.Errorf("kkbeam: encoding version %d, this worker reads %d", v, codecVersion)
	}
}
func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("kkbeam: %d bytes after the encoded value", len(d.b))
	}
	return d.err
}

// jsonPart encodes a small optional value as a JSON string field.
func (e *enc) jsonPart(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.str(string(b))
	return nil
}

func (d *dec) jsonPart(v any) {
	s := d.str()
	if d.err == nil {
		d.err = json.Unmarshal([]byte(s), v)
	}
}

// EncodeBatch is the Beam coder's encoder of Batch.
func EncodeBatch(b Batch) ([]byte, error) {
	e := &enc{b: make([]byte, 0, 80+len(b.File)+8*(len(b.Lines)+len(b.X)+len(b.Y)+len(b.Weights)+len(b.Targets)))}
	e.u64(codecVersion)
	e.str(b.File)
	e.i64(b.Start)
	e.i64s(b.Lines)
	e.u64(uint64(b.Cols))
	e.f64s(b.X)
	e.f64sOrNil(b.Y)
	e.f64sOrNil(b.Weights)
	e.f64sOrNil(b.Targets)
	e.i64(b.Bad)
	e.i64s(b.Before)
	var extra struct {
		FirstBad *BadRow `json:",omitempty"`
		Header   *Header `json:",omitempty"`
		FileErr  string  `json:",omitempty"`
	}
	extra.FirstBad, extra.Header, extra.FileErr = b.FirstBad, b.Header, b.FileErr
	if err := e.jsonPart(&extra); err != nil {
		return nil, err
	}
	return e.b, nil
}

// DecodeBatch is the Beam coder's decoder of Batch.
func DecodeBatch(p []byte) (Batch, error) {
	d := &dec{b: p}
	d.version()
	var b Batch
	b.File = d.str()
	b.Start = d.i64()
	b.Lines = d.i64s()
	cols := d.u64()
	b.X = d.f64s()
	b.Y = d.f64sOrNil()
	b.Weights = d.f64sOrNil()
	b.Targets = d.f64sOrNil()
	b.Bad = d.i64()
	b.Before = d.i64s()
	var extra struct {
		FirstBad *BadRow
		Header   *Header
		FileErr  string
	}
	d.jsonPart(&extra)
	if err := d.done(); err != nil {
		return Batch{}, err
	}
	b.FirstBad, b.Header, b.FileErr = extra.FirstBad, extra.Header, extra.FileErr
	n := len(b.Lines)
	if cols > limits.MaxDim || uint64(len(b.X)) != uint64(n)*cols || (b.Y != nil && len(b.Y) != n) ||
		(b.Weights != nil && len(b.Weights) != n) || (n == 0 && len(b.Targets) > 0) || (n > 0 && len(b.Targets)%n != 0) {
		return Batch{}, fmt.Errorf("kkbeam: batch of %d rows with %d values of width %d, %d targets, %d weights and %d values of several targets",
			n, len(b.X), cols, len(b.Y), len(b.Weights), len(b.Targets))
	}
	b.Cols = int(cols)
	return b, nil
}

// EncodeStats is the Beam coder's encoder of the second-pass accumulator.
func EncodeStats(s *Stats) ([]byte, error) {
	size := 64
	for _, f := range s.Folds {
		size += 80 + 8*(f.D*(f.D+1)/2+f.D*f.K+f.D+2*f.K)
	}
	e := &enc{b: make([]byte, 0, size)}
	e.u64(codecVersion)
	e.i64(s.Rows)
	e.i64(s.Bad)
	e.u64(uint64(len(s.Folds)))
	for _, f := range s.Folds {
		e.u64(uint64(f.D))
		e.u64(uint64(f.K))
		e.i64(int64(f.N))
		var weighted uint64
		if f.Weighted {
			weighted = 1
		}
		e.u64(weighted)
		e.f64(f.SumW)
		for i := 0; i < f.D; i++ {
			for _, v := range f.ZtZ[i*f.D+i : (i+1)*f.D] {
				e.f64(v)
			}
		}
		for _, arr := range [][]float64{f.ZtY, f.SumZ, f.SumY, f.SumY2} {
			for _, v := range arr {
				e.f64(v)
			}
		}
	}
	return e.b, nil
}

// DecodeStats is the Beam coder's decoder of the second-pass accumulator.
func DecodeStats(p []byte) (*Stats, error) {
	d := &dec{b: p}
	d.version()
	s := &Stats{Rows: d.i64(), Bad: d.i64()}
	folds := d.length(1)
	for range folds {
		dim, k, n := d.u64(), d.u64(), d.i64()
		weighted, sumW := d.u64(), d.f64()
		if d.err != nil {
			break
		}
		// Every value takes 8 bytes: refuse sizes the rest cannot hold.
		if dim == 0 || k == 0 || dim > limits.MaxDim || k > limits.MaxClasses || n < 0 || weighted > 1 ||
			dim*(dim+1)/2+dim*k > uint64(len(d.b)/8) {
			d.err = errShort
			break
		}
		if _, err := limits.Matrix("kkbeam: ridge statistics", int(dim), int(dim)); err != nil {
			d.err = err
			break
		}
		D, K := int(dim), int(k)
		f := linear.NewStats(D, K)
		f.N, f.Weighted, f.SumW = int(n), weighted == 1, sumW
		for i := 0; i < D; i++ {
			row := f.ZtZ[i*D+i : (i+1)*D]
			for j := range row {
				row[j] = d.f64()
			}
		}
		for _, arr := range [][]float64{f.ZtY, f.SumZ, f.SumY, f.SumY2} {
			for j := range arr {
				arr[j] = d.f64()
			}
		}
		s.Folds = append(s.Folds, f)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return s, nil
}

// EncodePrep is the Beam coder's encoder of the first-pass accumulator.
func EncodePrep(p *Prep) ([]byte, error) { return json.Marshal(p) }

// DecodePrep is the Beam coder's decoder of the first-pass accumulator.
func DecodePrep(b []byte) (*Prep, error) {
	p := &Prep{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("kkbeam: first-pass statistics: %w", err)
	}
	if p.Census == nil || p.Files == nil || p.FileClasses == nil {
		return nil, errors.New("kkbeam: first-pass statistics: no census")
	}
	return p, nil
}

// EncodeScores is the Beam coder's encoder of the third-pass accumulator.
func EncodeScores(s *Scores) ([]byte, error) {
	size := 32
	for _, p := range s.Parts {
		size += 40 + 8*(len(p.Scores)+len(p.Labels)+len(p.Weights))
	}
	e := &enc{b: make([]byte, 0, size)}
	e.u64(codecVersion)
	e.i64(s.Bad)
	e.u64(uint64(len(s.Parts)))
	for _, p := range s.Parts {
		e.i64(int64(p.First))
		e.f64s(p.Scores)
		labels := make([]int64, len(p.Labels))
		for i, l := range p.Labels {
			labels[i] = int64(l)
		}
		e.i64s(labels)
		e.f64sOrNil(p.Weights)
	}
	return e.b, nil
}

// DecodeScores is the Beam coder's decoder of the third-pass accumulator.
func DecodeScores(b []byte) (*Scores, error) {
	d := &dec{b: b}
	d.version()
	s := &Scores{Bad: d.i64()}
	parts := d.length(1)
	for range parts {
		first := d.i64()
		scores := d.f64s()
		labels := d.i64s()
		weights := d.f64sOrNil()
		if d.err != nil {
			break
		}
		n := len(labels)
		if first < 0 || first > limits.MaxElements || (n > 0 && len(scores)%n != 0) || (n == 0 && len(scores) != 0) || (weights != nil && len(weights) != n) {
			d.err = fmt.Errorf("kkbeam: out-of-fold scores of %d rows with %d values and %d weights", n, len(scores), len(weights))
			break
		}
		p := &model.ScoredRows{First: int(first), Scores: scores, Labels: make([]int, n), Weights: weights}
		for i, l := range labels {
			if l < 0 || l >= limits.MaxClasses {
				d.err = fmt.Errorf("kkbeam: out-of-fold scores with class %d", l)
				break
			}
			p.Labels[i] = int(l)
		}
		s.Parts = append(s.Parts, p)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return s, nil
}
