package seqmodel

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/native"
)

// The inference file's identification: the 8 bytes every file begins
// with (PNG's pattern: a non-ASCII byte, the name, and the line ends and
// end-of-file character that a text-mode transfer would alter), the format
// version this package writes and reads, the format name of the header,
// and the file name extension the CLI uses.
const (
	Magic   = "\x89KKS\r\n\x1a\n"
	Version = 1
	Format  = "kernelkit-sequence-model"
	Ext     = ".kks"
)

// Bounds of a file's parts, checked before anything of that size is
// allocated: the JSON header (a vocabulary of 100k tokens and a deep
// model's variable list fit in a fraction of it), a token or class name,
// the tokens the tokenizer drops, and the weights (limits.MaxElements
// float32 values, 4 GiB).
const (
	MaxHeaderBytes = 16 << 20
	MaxNameBytes   = 256
	MaxDropTokens  = 64
	MaxValues      = limits.MaxElements
)

// prefixBytes is the size of the fixed prefix: magic, version, header
// length. digestBytes is the size of the SHA-256 digest that ends a file.
const (
	prefixBytes = len(Magic) + 8
	digestBytes = sha256.Size
)

// Header is the JSON header of an inference file: what the model is and
// how its input is read. Variables lists the weights that follow it, in
// their order.
type Header struct {
	Format string `json:"format"`
	// Model is the classifier's kind and every setting of it (defaults
	// applied); Model.Length is the longest sequence it reads.
	Model arch.ModelConfig `json:"model"`
	// Vocabulary maps token ids to tokens: Vocabulary[i] is the token of
	// id i; id 0 is padding (its entry names it, e.g. "<pad>", and never
	// matches a token of the input).
	Vocabulary []string `json:"vocabulary"`
	// Tokenizer says how text becomes tokens.
	Tokenizer Tokenizer `json:"tokenizer"`
	// Classes names the classes, in the order of the logits.
	Classes []string `json:"classes"`
	// MaxLength is the longest sequence, in tokens (Model.Length).
	MaxLength int `json:"max_length"`
	// Seed and Step record the training run: the seed of its
	// initialisation and random features, and the optimiser steps taken.
	Seed uint64 `json:"seed"`
	Step int64  `json:"step"`
	// Variables are the weights that follow the header, float32
	// little-endian, row-major, one after the other in this order.
	Variables []VariableSpec `json:"variables"`
}

// VariableSpec names one weight tensor of the file and its dimensions.
type VariableSpec struct {
	Scope string `json:"scope"`
	Name  string `json:"name"`
	Dims  []int  `json:"dims"`
}

// Tokenizer describes how a sequence's text becomes tokens: split at
// runs of Unicode white space (Split "whitespace", Go's strings.Fields),
// then the tokens listed in Drop removed (the parentheses of the Long
// Range Arena's ListOps format, as tasks.Tokenize does). Every remaining
// token must be in the vocabulary.
type Tokenizer struct {
	Split string   `json:"split"`
	Drop  []string `json:"drop,omitempty"`
}

// SplitWhitespace is the one split this version knows.
const SplitWhitespace = "whitespace"

// Model is a trained sequence classifier loaded for inference: the
// header and the weights, checked. It is immutable and safe for
// concurrent use; NewScorer runs it.
type Model struct {
	h      Header
	proto  *native.Predictor[float32] // holds the weights; never run
	digest [sha256.Size]byte
	ids    map[string]int32
	drop   map[string]bool
}

// New builds a model from a header and the weights of its variables
// (float32 or float64 data, in any order; variables the model does not
// use, such as a checkpoint's optimiser state, are ignored). The header
// is validated as Load validates a file's; New sets its Format,
// MaxLength (the model's length) and Variables (VariablesOf).
func New(h Header, vars []native.Variable) (*Model, error) {
	h.Format = Format
	h.Model.Defaults()
	h.MaxLength = h.Model.Length
	vs, err := VariablesOf(h.Model)
	if err != nil {
		return nil, fmt.Errorf("seqmodel: %w", err)
	}
	h.Variables = vs
	m := &Model{}
	if err := m.setHeader(h); err != nil {
		return nil, err
	}
	byKey := make(map[string]native.Variable, len(vars))
	for _, v := range vars {
		byKey[v.Scope+"\x00"+v.Name] = v
	}
	ordered := make([]native.Variable, len(m.h.Variables))
	for i, spec := range m.h.Variables {
		v, ok := byKey[spec.Scope+"\x00"+spec.Name]
		if !ok {
			return nil, fmt.Errorf("seqmodel: the weights lack %s/%s", spec.Scope, spec.Name)
		}
		ordered[i] = v
	}
	if err := m.build(ordered); err != nil {
		return nil, err
	}
	// The digest of the bytes the model writes.
	hw := sha256.New()
	if err := m.write(hw); err != nil {
		return nil, err
	}
	copy(m.digest[:], hw.Sum(nil)[:digestBytes])
	return m, nil
}

// VariablesOf lists the variables an inference file of cfg holds (after
// cfg.Defaults; cfg must validate), in the file's order: the model's
// parameters and random features as arch.ModelConfig.Variables lists them,
// with their dimensions. The model's size is checked first (at most
// MaxValues values).
func VariablesOf(cfg arch.ModelConfig) ([]VariableSpec, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := valueCount(&cfg); err != nil {
		return nil, err
	}
	var out []VariableSpec
	for _, v := range cfg.Variables() {
		out = append(out, VariableSpec{Scope: v.Scope, Name: v.Name, Dims: append([]int(nil), v.Dims...)})
	}
	return out, nil
}

// valueCount returns the number of weight values of a validated cfg
// (parameters and random features), at most MaxValues.
func valueCount(cfg *arch.ModelConfig) (int, error) {
	params, fixed, err := cfg.ParamCount()
	if err != nil {
		return 0, err
	}
	if n := params + fixed; n > MaxValues {
		return 0, fmt.Errorf("seqmodel: a %s model of width %d and depth %d has %d weight values, more than the limit of %d", cfg.Kind, cfg.Width, cfg.Depth, n, MaxValues)
	}
	return int(params + fixed), nil
}

// setHeader validates h (a file's or New's) and sets m's header and
// token tables from it.
func (m *Model) setHeader(h Header) error {
	if h.Format != Format {
		return fmt.Errorf("seqmodel: header format %.60q, want %q", h.Format, Format)
	}
	cfg := h.Model
	cfg.Defaults()
	cfg.FFT = false
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("seqmodel: %w", err)
	}
	if _, err := valueCount(&cfg); err != nil {
		return err
	}
	h.Model = cfg
	if h.MaxLength != cfg.Length {
		return fmt.Errorf("seqmodel: maximum length %d differs from the model's length %d", h.MaxLength, cfg.Length)
	}
	if h.Step < 0 {
		return fmt.Errorf("seqmodel: negative step count %d", h.Step)
	}
	if len(h.Vocabulary) != cfg.Vocab {
		return fmt.Errorf("seqmodel: a vocabulary of %d tokens for a model of %d token ids", len(h.Vocabulary), cfg.Vocab)
	}
	if h.Tokenizer.Split != SplitWhitespace {
		return fmt.Errorf("seqmodel: tokenizer split %.40q, this version knows %q", h.Tokenizer.Split, SplitWhitespace)
	}
	if len(h.Tokenizer.Drop) > MaxDropTokens {
		return fmt.Errorf("seqmodel: the tokenizer drops %d tokens, at most %d", len(h.Tokenizer.Drop), MaxDropTokens)
	}
	m.ids = make(map[string]int32, len(h.Vocabulary))
	for i, tok := range h.Vocabulary {
		if err := checkToken(tok); err != nil {
			return fmt.Errorf("seqmodel: vocabulary entry %d: %w", i, err)
		}
		if i == 0 {
			continue // padding: never matched
		}
		if _, dup := m.ids[tok]; dup {
			return fmt.Errorf("seqmodel: vocabulary token %.40q appears twice", tok)
		}
		m.ids[tok] = int32(i)
	}
	m.drop = make(map[string]bool, len(h.Tokenizer.Drop))
	for _, tok := range h.Tokenizer.Drop {
		if err := checkToken(tok); err != nil {
			return fmt.Errorf("seqmodel: dropped token: %w", err)
		}
		if _, in := m.ids[tok]; in || m.drop[tok] {
			return fmt.Errorf("seqmodel: the tokenizer drops %.40q, which is a vocabulary token or dropped twice", tok)
		}
		m.drop[tok] = true
	}
	if len(h.Classes) != cfg.Classes {
		return fmt.Errorf("seqmodel: %d class names for a model of %d classes", len(h.Classes), cfg.Classes)
	}
	for i, c := range h.Classes {
		if c == "" || len(c) > MaxNameBytes || !utf8.ValidString(c) || slices.Contains(h.Classes[:i], c) {
			return fmt.Errorf("seqmodel: class name %d (%.40q) must be non-empty, distinct, UTF-8 and at most %d bytes", i, c, MaxNameBytes)
		}
	}
	want, err := VariablesOf(cfg)
	if err != nil {
		return err
	}
	if len(h.Variables) != len(want) {
		return fmt.Errorf("seqmodel: %d variables for a %s model of %d", len(h.Variables), cfg.Kind, len(want))
	}
	for i, v := range h.Variables {
		if v.Scope != want[i].Scope || v.Name != want[i].Name || !slices.Equal(v.Dims, want[i].Dims) {
			return fmt.Errorf("seqmodel: variable %d is %.80s/%.40s%v, the %s model's is %s/%s%v", i, v.Scope, v.Name, clipDims(v.Dims),
				cfg.Kind, want[i].Scope, want[i].Name, want[i].Dims)
		}
	}
	h.Vocabulary = slices.Clone(h.Vocabulary)
	h.Classes = slices.Clone(h.Classes)
	h.Tokenizer.Drop = slices.Clone(h.Tokenizer.Drop)
	h.Variables = want
	m.h = h
	return nil
}

// checkToken checks a vocabulary or dropped token: UTF-8, 1 to
// MaxNameBytes bytes, no white space (the tokenizer splits there).
func checkToken(tok string) error {
	if tok == "" || len(tok) > MaxNameBytes || !utf8.ValidString(tok) {
		return fmt.Errorf("token %.40q must be UTF-8 of 1 to %d bytes", tok, MaxNameBytes)
	}
	if strings.IndexFunc(tok, unicode.IsSpace) >= 0 {
		return fmt.Errorf("token %.40q holds white space, where the tokenizer splits", tok)
	}
	return nil
}

// clipDims returns at most the first 4 dimensions, for a message.
func clipDims(d []int) []int {
	if len(d) > 4 {
		return d[:4]
	}
	return d
}

// build checks the weights (m.h.Variables' order, each of its size and
// finite) and sets the predictor that holds them.
func (m *Model) build(vars []native.Variable) error {
	for i, v := range vars {
		spec := m.h.Variables[i]
		if !slices.Equal(v.Dims, spec.Dims) {
			return fmt.Errorf("seqmodel: variable %s/%s has dimensions %v, want %v", v.Scope, v.Name, clipDims(v.Dims), spec.Dims)
		}
		if err := checkFinite(v); err != nil {
			return err
		}
	}
	p, err := native.NewPredictor[float32](m.h.Model, vars, 1)
	if err != nil {
		return fmt.Errorf("seqmodel: %w", err)
	}
	m.proto = p
	return nil
}

// checkFinite reports the first NaN or infinity of a float32 or float64
// variable (its size is checked by the predictor).
func checkFinite(v native.Variable) error {
	size := map[string]int{"float32": 4, "float64": 8}[v.DType]
	if size == 0 {
		return fmt.Errorf("seqmodel: variable %s/%s has dtype %.20q, want float32 or float64", v.Scope, v.Name, v.DType)
	}
	for i := 0; i+size <= len(v.Data); i += size {
		var f float64
		if size == 4 {
			f = float64(math.Float32frombits(binary.LittleEndian.Uint32(v.Data[i:])))
		} else {
			f = math.Float64frombits(binary.LittleEndian.Uint64(v.Data[i:]))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("seqmodel: variable %s/%s holds %v at index %d (damaged or diverged weights)", v.Scope, v.Name, f, i/size)
		}
	}
	return nil
}

// params returns the predictor's parameters in the file's order.
func (m *Model) params() []*native.Param[float32] {
	by := map[string]*native.Param[float32]{}
	for _, p := range m.proto.Params() {
		by[p.Scope+"\x00"+p.Name] = p
	}
	out := make([]*native.Param[float32], len(m.h.Variables))
	for i, v := range m.h.Variables {
		out[i] = by[v.Scope+"\x00"+v.Name]
	}
	return out
}

// write writes the file without its digest: prefix, header, weights.
func (m *Model) write(w io.Writer) error {
	hdr, err := json.Marshal(&m.h)
	if err != nil {
		return err
	}
	if len(hdr) > MaxHeaderBytes {
		return fmt.Errorf("seqmodel: the header takes %d bytes, more than the limit of %d", len(hdr), MaxHeaderBytes)
	}
	pre := make([]byte, 0, prefixBytes)
	pre = append(pre, Magic...)
	pre = binary.LittleEndian.AppendUint32(pre, Version)
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(hdr)))
	if _, err := w.Write(pre); err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, p := range m.params() {
		for _, v := range p.Value {
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	_, err = w.Write(buf)
	return err
}

// Write writes the inference file: prefix (magic, version, header
// length), header, weights and their SHA-256 digest. The bytes depend on
// the model alone.
func (m *Model) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	hw := sha256.New()
	if err := m.write(io.MultiWriter(bw, hw)); err != nil {
		return err
	}
	if _, err := bw.Write(hw.Sum(nil)); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteFile writes the inference file to path atomically (a temporary
// file renamed over path only when the whole file is written).
func (m *Model) WriteFile(path string) error {
	return atomicfile.Write(path, m.Write)
}

// Load reads an inference file from r: the prefix, the header (validated:
// format, model settings, vocabulary, tokenizer, classes, the variables
// the model needs with their dimensions), the weights (finite) and the
// digest, which must match, with nothing after it. A damaged, truncated or
// foreign file gives a one-line error. Sizes come from the header, which
// is bounded (MaxHeaderBytes) and checked against the model's settings
// before the weights are read; the weights are read in pieces, so a
// truncated stream allocates no more than it delivered (LoadFile also
// checks the file's size first).
func Load(r io.Reader) (*Model, error) { return load(r, -1) }

// LoadFile reads the inference file at path (Load), refusing anything but
// a regular file and a file whose size is not the one its header
// describes before the weights are read.
func LoadFile(path string) (_ *Model, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("seqmodel: %s is not a regular file", path)
	}
	m, err := load(bufio.NewReaderSize(f, 1<<16), st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// IsInferenceFile reports whether b, the first bytes of a file (at least
// len(Magic) of them), begin an inference file.
func IsInferenceFile(b []byte) bool { return bytes.HasPrefix(b, []byte(Magic)) }

// load reads a file of size bytes (negative: unknown).
func load(r io.Reader, size int64) (*Model, error) {
	hw := sha256.New()
	tr := io.TeeReader(r, hw)
	pre := make([]byte, prefixBytes)
	n, err := io.ReadFull(tr, pre)
	if err := checkMagic(pre[:n]); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("seqmodel: truncated inference file: %d bytes, shorter than its %d-byte prefix", n, prefixBytes)
	}
	if v := binary.LittleEndian.Uint32(pre[len(Magic):]); v != Version {
		return nil, fmt.Errorf("seqmodel: inference file format version %d, this kernelkit reads version %d", v, Version)
	}
	hlen := int64(binary.LittleEndian.Uint32(pre[len(Magic)+4:]))
	if hlen < 2 || hlen > MaxHeaderBytes {
		return nil, fmt.Errorf("seqmodel: header length %d outside [2, %d] (a damaged file)", hlen, MaxHeaderBytes)
	}
	if size >= 0 && size < int64(prefixBytes)+hlen+digestBytes {
		return nil, fmt.Errorf("seqmodel: truncated inference file: %d bytes, its header alone takes %d", size, int64(prefixBytes)+hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(tr, hdr); err != nil {
		return nil, fmt.Errorf("seqmodel: truncated inference file: the header of %d bytes ends early", hlen)
	}
	h, err := decodeHeader(hdr)
	if err != nil {
		return nil, err
	}
	m := &Model{}
	if err := m.setHeader(h); err != nil {
		return nil, err
	}
	values, err := valueCount(&m.h.Model)
	if err != nil {
		return nil, err
	}
	total := int64(prefixBytes) + hlen + 4*int64(values) + digestBytes
	if size >= 0 && size != total {
		return nil, fmt.Errorf("seqmodel: the file has %d bytes, its header describes %d (truncated or damaged)", size, total)
	}
	data, err := readWeights(tr, 4*int64(values), size >= 0)
	if err != nil {
		return nil, err
	}
	var sum [digestBytes]byte
	got := hw.Sum(nil)
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, errors.New("seqmodel: truncated inference file: its digest is missing")
	}
	if !bytes.Equal(sum[:], got) {
		return nil, errors.New("seqmodel: the inference file is damaged: its SHA-256 digest does not match its contents")
	}
	var extra [1]byte
	switch k, err := io.ReadFull(r, extra[:]); {
	case k > 0:
		return nil, errors.New("seqmodel: data after the end of the inference file")
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("seqmodel: reading the inference file: %w", err)
	}
	vars := make([]native.Variable, len(m.h.Variables))
	off := 0
	for i, spec := range m.h.Variables {
		n := 4
		for _, d := range spec.Dims {
			n *= d
		}
		vars[i] = native.Variable{Scope: spec.Scope, Name: spec.Name, DType: "float32", Dims: spec.Dims, Data: data[off : off+n]}
		off += n
	}
	if err := m.build(vars); err != nil {
		return nil, err
	}
	copy(m.digest[:], sum[:])
	return m, nil
}

// checkMagic refuses a file that does not begin with Magic, naming what
// it looks like.
func checkMagic(b []byte) error {
	if bytes.HasPrefix(b, []byte(Magic)) {
		return nil
	}
	switch t := bytes.TrimLeft(b, " \t\r\n"); {
	case len(b) == 0:
		return errors.New("seqmodel: empty file, not an inference file")
	case len(t) > 0 && t[0] == '{':
		return errors.New("seqmodel: not an inference file but JSON: a ridge model of kernelkit fit or a training checkpoint (kernelkit export CHECKPOINT --out m.kks makes an inference file)")
	case len(b) < len(Magic) && strings.HasPrefix(Magic, string(b)):
		return fmt.Errorf("seqmodel: truncated inference file: %d bytes", len(b))
	case len(b) >= 4 && string(b[1:4]) == "KKS":
		return errors.New("seqmodel: damaged inference file: its first bytes were altered (a text-mode transfer?)")
	}
	return errors.New("seqmodel: not a kernelkit inference file (it does not begin with the inference file's magic bytes)")
}

// decodeHeader parses the JSON header strictly: UTF-8, no field the
// format does not define, nothing after the object.
func decodeHeader(b []byte) (Header, error) {
	var h Header
	if !utf8.Valid(b) {
		return h, errors.New("seqmodel: the header is not UTF-8 (a damaged file)")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, fmt.Errorf("seqmodel: the header is not valid: %.160s", err.Error())
	}
	if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
		return h, errors.New("seqmodel: data after the header's JSON object (a damaged file)")
	}
	return h, nil
}

// readWeights reads n bytes of weights: at once when the file's size
// vouched for them (known), else in pieces of at most 1 MiB joined when
// all have come, so that a stream shorter than its header claims
// allocates no more than the pieces it delivered.
func readWeights(r io.Reader, n int64, known bool) ([]byte, error) {
	fail := func(got int64) error {
		return fmt.Errorf("seqmodel: truncated inference file: %d of its %d bytes of weights", got, n)
	}
	if known {
		data := make([]byte, n)
		if k, err := io.ReadFull(r, data); err != nil {
			return nil, fail(int64(k))
		}
		return data, nil
	}
	var pieces [][]byte
	for got := int64(0); got < n; {
		piece := make([]byte, min(n-got, 1<<20))
		k, err := io.ReadFull(r, piece)
		if err != nil {
			return nil, fail(got + int64(k))
		}
		pieces = append(pieces, piece)
		got += int64(k)
	}
	return bytes.Join(pieces, nil), nil
}

// Header returns a copy of the model's header (defaults applied).
func (m *Model) Header() Header {
	h := m.h
	h.Vocabulary = slices.Clone(h.Vocabulary)
	h.Classes = slices.Clone(h.Classes)
	h.Tokenizer.Drop = slices.Clone(h.Tokenizer.Drop)
	h.Variables = slices.Clone(h.Variables)
	return h
}

// Config returns the model's settings (defaults applied).
func (m *Model) Config() arch.ModelConfig { return m.h.Model }

// MaxLength returns the longest sequence the model reads, in tokens.
func (m *Model) MaxLength() int { return m.h.MaxLength }

// Classes returns the class names, in the order of the logits.
func (m *Model) Classes() []string { return slices.Clone(m.h.Classes) }

// Digest returns the SHA-256 digest of the model's file (hexadecimal):
// two models with the same digest have the same settings and weights.
func (m *Model) Digest() string { return hex.EncodeToString(m.digest[:]) }
