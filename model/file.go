package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/nystrom"
)

// FormatName and Version identify model files. Version is the newest
// version: Save writes version 3 for a model whose map has a temperature
// (features.Temper) and version 2 otherwise, so that a model without one
// has the bytes it had before version 3.
const (
	FormatName = "kernelkit-model"
	Version    = 3
	// versionPlain is the version of files without a temperature.
	versionPlain = 2
)

type file struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Task     Task            `json:"task"`
	Classes  int             `json:"classes"`
	Columns  []string        `json:"columns,omitempty"`
	Label    string          `json:"label,omitempty"`
	Scaler   *data.Scaler    `json:"scaler"`
	MapKind  string          `json:"map_kind,omitempty"`
	Features json.RawMessage `json:"features"`
	// Temperature (version 3 only) is τ of the softmax kernel exp(xᵀy/τ):
	// the stored map (map_kind, features) is applied to x/√τ.
	Temperature float64   `json:"temperature,omitempty"`
	Lambda      float64   `json:"lambda"`
	Jitter      float64   `json:"jitter"`
	Weights     []float64 `json:"weights"`
	Intercept   []float64 `json:"intercept"`
	// Outputs and Targets are optional (multi-output regression): the
	// number of target columns (absent: 1) and their names.
	Outputs int      `json:"outputs,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Calibration is optional (classification models fitted with
	// Options.Calibrate).
	Calibration *calibrate.Platt `json:"calibration,omitempty"`
}

// Save writes the model: version 2, or version 3 with the temperature
// field when the map is tempered (features.Temper), its map_kind and
// features then those of the inner map. The feature map must implement
// features.Encoder.
func (m *Model) Save(w io.Writer) error {
	kind, spec, err := features.Encode(m.Map)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	version, tau := versionPlain, 0.0
	if kind == features.TemperedSpecKind {
		var ts features.TemperedSpec
		if err := json.Unmarshal(spec, &ts); err != nil {
			return fmt.Errorf("model: tempered map spec: %w", err)
		}
		version, tau, kind, spec = Version, ts.Temperature, ts.MapKind, ts.Map
	}
	f := file{Format: FormatName, Version: version, Task: m.Task, Classes: m.Classes,
		Columns: m.Columns, Label: m.Label, Scaler: m.Scaler, MapKind: kind, Features: spec, Temperature: tau,
		Lambda: m.Linear.Lambda, Jitter: m.Linear.Jitter,
		Weights: m.Linear.W.RawMatrix().Data, Intercept: m.Linear.B, Calibration: m.Calibration}
	if _, k := m.Linear.W.Dims(); m.Task == Regression && k > 1 {
		f.Outputs, f.Targets = k, m.Targets
	}
	enc := json.NewEncoder(w)
	return enc.Encode(&f)
}

// Load reads a model file (version 1, 2 or 3), validating its format,
// version, every dimension and size, and that nothing but white space
// follows the JSON object. The feature map is decoded by Decoders: the
// kinds of the maps this package's fits draw or build themselves. A map
// of another kind (an SNNK tower, a fitted positive-feature map, any map
// a caller registered) needs LoadWith with a registry that decodes it;
// catalog.Default() decodes every kind of kernelkit. Package model does
// not import package catalog, so that reading a model file does not pull
// in every operator.
//
// The limits of package internal/limits apply: input and feature
// dimensions at most 2²⁴, at most 2²⁰ classes, and the weight matrix
// (features × classes) and the stored projection at most 2³⁰ values each,
// so that a model that loads can predict without an overflow.
func Load(r io.Reader) (*Model, error) {
	return LoadWith(r, Decoders())
}

// LoadWith is Load with a caller's registry of map decoders (nil:
// Decoders).
func LoadWith(r io.Reader, reg *features.Registry) (*Model, error) {
	if reg == nil {
		reg = Decoders()
	}
	m, err := load(r, reg)
	if err != nil {
		return nil, clipError(err)
	}
	return m, nil
}

// Decoders returns a new registry of the decoders of the map kinds that
// this package's fits write without a caller's registry: the maps of
// package features (random features, TensorSketch, the χ² maps), the
// Nyström maps (package nystrom) and exact kernel ridge's kernel columns
// (package krr). It has no map constructors.
func Decoders() *features.Registry {
	r := features.NewRegistry()
	for _, d := range []struct {
		kind string
		fn   features.Decoder
	}{
		{features.SpecKind, features.DecodeSpec},
		{features.TensorSketchSpecKind, features.DecodeTensorSketch},
		{features.AdditiveChi2SpecKind, features.DecodeAdditiveChi2},
		{features.SkewedChi2SpecKind, features.DecodeSkewedChi2},
		{nystrom.SpecKind, nystrom.Decode},
		{krr.ColumnsSpecKind, krr.DecodeColumns},
	} {
		if err := r.RegisterDecoder(d.kind, d.fn); err != nil {
			panic(err) // a duplicate kind here is a programming error
		}
	}
	return r
}

// maxErrorBytes bounds the length of a Load error message: JSON errors can
// quote a literal of the file (a number of any length).
const maxErrorBytes = 200

// clippedError is an error whose message is cut to maxErrorBytes; it
// unwraps to the original.
type clippedError struct {
	msg string
	err error
}

func (e *clippedError) Error() string { return e.msg }

func (e *clippedError) Unwrap() error { return e.err }

// clipError returns err with its message cut to maxErrorBytes (on a rune
// boundary), or err itself if it is short enough.
func clipError(err error) error {
	msg := err.Error()
	if len(msg) <= maxErrorBytes {
		return err
	}
	cut := maxErrorBytes - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return &clippedError{msg: msg[:cut] + "…", err: err}
}

// trailing returns an error if anything but JSON white space follows the
// value dec has decoded from r.
func trailing(dec *json.Decoder, r io.Reader) error {
	rest := io.MultiReader(dec.Buffered(), r)
	off := dec.InputOffset()
	var buf [4096]byte
	for {
		n, err := rest.Read(buf[:])
		for i, c := range buf[:n] {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			}
			return fmt.Errorf("model: unexpected data after the model object at byte %d", off+int64(i))
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("model: reading after the model object: %w", err)
		}
	}
}

func load(r io.Reader, reg *features.Registry) (*Model, error) {
	var f file
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("model: file is empty or truncated")
		}
		return nil, fmt.Errorf("model: not a kernelkit model file: %w", err)
	}
	if err := trailing(dec, r); err != nil {
		return nil, err
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("model: not a kernelkit model file (format %.40q)", f.Format)
	}
	if f.Version < 1 || f.Version > Version {
		return nil, fmt.Errorf("model: file format version %d, this kernelkit reads versions 1 to %d", f.Version, Version)
	}
	switch {
	case f.Version == Version:
		if err := features.CheckTemperature(f.Temperature); err != nil || f.Temperature == 1 {
			return nil, fmt.Errorf("model: version-%d file with temperature %v (want a positive finite number other than 1)", Version, f.Temperature)
		}
	case f.Temperature != 0:
		return nil, fmt.Errorf("model: version-%d file with a temperature field (version %d records it)", f.Version, Version)
	}
	if f.MapKind == features.TemperedSpecKind {
		return nil, fmt.Errorf("model: map_kind %q: a model file records the temperature in its temperature field (version %d)", f.MapKind, Version)
	}
	kind := f.MapKind
	if f.Version == 1 {
		if kind != "" {
			return nil, errors.New("model: version-1 file with a map_kind field")
		}
		kind = features.SpecKind
	}
	if kind == "" {
		return nil, errors.New("model: file has no map_kind")
	}
	if len(f.Features) == 0 {
		return nil, errors.New("model: file has no feature map")
	}
	k := 1
	switch f.Task {
	case Classification:
		if f.Classes < 2 || f.Classes > limits.MaxClasses {
			return nil, fmt.Errorf("model: classification model with %d classes (want 2 to %d)", f.Classes, limits.MaxClasses)
		}
		k = f.Classes
	case Regression:
		if f.Classes != 0 {
			return nil, fmt.Errorf("model: regression model with %d classes (want 0)", f.Classes)
		}
		if f.Outputs < 0 || f.Outputs > limits.MaxClasses {
			return nil, fmt.Errorf("model: regression model with %d outputs (want 1 to %d)", f.Outputs, limits.MaxClasses)
		}
		k = max(f.Outputs, 1)
		if f.Targets != nil && len(f.Targets) != k {
			return nil, fmt.Errorf("model: %d target names for %d outputs", len(f.Targets), k)
		}
	default:
		return nil, fmt.Errorf("model: unknown task %.40q", f.Task)
	}
	if f.Task != Regression && (f.Outputs != 0 || f.Targets != nil) {
		return nil, errors.New("model: outputs and targets are fields of regression models")
	}
	mp, err := reg.Decode(kind, f.Features)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if f.Temperature != 0 {
		if mp, err = features.Temper(mp, f.Temperature); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	dim, in := mp.Dim(), mp.InputDim()
	if err := limits.Dim("model: feature dimension", dim); err != nil {
		return nil, err
	}
	if err := limits.Dim("model: input dimension", in); err != nil {
		return nil, err
	}
	nw, err := limits.Matrix("model: weight matrix", dim, k)
	if err != nil {
		return nil, err
	}
	if len(f.Weights) != nw || len(f.Intercept) != k {
		return nil, fmt.Errorf("model: weights have %d values and intercept %d, want %d×%d and %d", len(f.Weights), len(f.Intercept), dim, k, k)
	}
	if f.Columns != nil && len(f.Columns) != in {
		return nil, fmt.Errorf("model: file has %d column names for a feature map of %d inputs", len(f.Columns), in)
	}
	seen := make(map[string]bool, len(f.Columns))
	for _, c := range f.Columns {
		if seen[c] {
			return nil, fmt.Errorf("model: file names the input column %.40q twice", c)
		}
		seen[c] = true
	}
	if f.Scaler != nil && (len(f.Scaler.Mean) != in || len(f.Scaler.Scale) != in) {
		return nil, fmt.Errorf("model: scaler has %d means and %d scales, the feature map takes %d inputs", len(f.Scaler.Mean), len(f.Scaler.Scale), in)
	}
	for _, arr := range [][]float64{f.Weights, f.Intercept} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("model: non-finite weight in model file")
			}
		}
	}
	if f.Scaler != nil {
		for j, v := range f.Scaler.Scale {
			if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(f.Scaler.Mean[j]) || math.IsInf(f.Scaler.Mean[j], 0) {
				return nil, errors.New("model: scaler has a non-finite mean or a non-positive or non-finite scale")
			}
		}
	}
	if !(f.Lambda >= 0) || math.IsInf(f.Lambda, 0) || !(f.Jitter >= 0) || math.IsInf(f.Jitter, 0) {
		return nil, fmt.Errorf("model: lambda %v and jitter %v must be non-negative and finite", f.Lambda, f.Jitter)
	}
	if err := checkCalibration(f.Calibration, f.Task, f.Classes); err != nil {
		return nil, err
	}
	return &Model{Task: f.Task, Classes: f.Classes, Columns: f.Columns, Label: f.Label, Targets: f.Targets, Scaler: f.Scaler, Map: mp, Calibration: f.Calibration,
		Linear: &linear.Model{W: mat.NewDense(dim, k, f.Weights), B: f.Intercept, Lambda: f.Lambda, Jitter: f.Jitter}}, nil
}
