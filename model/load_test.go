package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// tinyModel is a hand-written version-2 model file: two inputs scaled by
// the scaler, the arc-cosine order-1 map with m = 2 projections W, two
// classes. For x = (1.5, 2) the scaled input is (0.5, 1), Wx = (−0.75, 1),
// z = √2/√2·relu(Wx) = (0, 1) and the scores are zW + b = (0.6, 1.9).
const tinyModel = `{"format":"kernelkit-model","version":2,"task":"classification","classes":2,` +
	`"columns":["a","b"],"label":"y","scaler":{"mean":[0.5,1],"scale":[2,1]},"map_kind":"features",` +
	`"features":{"kernel":"arccos1","form":"relu","features":2,"sampler":"gaussian","seed":1,"input_dim":2,"m":2,"w":[0.5,-1,1.5,0.25]},` +
	`"lambda":1,"jitter":0,"weights":[1,-1,0.5,2],"intercept":[0.1,-0.1]}` + "\n"

// tinyRegression is a regression model with the rbf cos map (phases b) on
// one input and no scaler.
const tinyRegression = `{"format":"kernelkit-model","version":2,"task":"regression","classes":0,"scaler":null,` +
	`"map_kind":"features","features":{"kernel":"rbf","form":"cos","gamma":0.5,"features":2,"sampler":"gaussian",` +
	`"seed":2,"input_dim":1,"m":2,"w":[1,-2],"b":[0.5,3]},"lambda":0.1,"jitter":0,"weights":[1,2],"intercept":[0.25]}` + "\n"

func TestLoadTiny(t *testing.T) {
	m, err := Load(strings.NewReader(tinyModel))
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Predict(mat.NewDense(1, 2, []float64{1.5, 2}))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(s.At(0, 0)-0.6) > 1e-15 || math.Abs(s.At(0, 1)-1.9) > 1e-15 {
		t.Errorf("scores %v, want [0.6 1.9]", s.RawMatrix().Data)
	}
	// z(x) = √(2/2)·cos(Wx + b) for x = 0.5: cos(1) and cos(2).
	r, err := Load(strings.NewReader(tinyRegression))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Predict(mat.NewDense(1, 1, []float64{0.5}))
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Cos(1) + 2*math.Cos(2) + 0.25; math.Abs(p.At(0, 0)-want) > 1e-15 {
		t.Errorf("prediction %v, want %v", p.At(0, 0), want)
	}
}

// TestLoadTrailingBytes: nothing but white space may follow the model
// object.
func TestLoadTrailingBytes(t *testing.T) {
	for _, tail := range []string{"", "\n", " \t\r\n\n"} {
		if _, err := Load(strings.NewReader(tinyModel + tail)); err != nil {
			t.Errorf("tail %q: %v", tail, err)
		}
	}
	for _, tail := range []string{"x", "{}", tinyModel, "\x00", "\n\n#", "garbage\n", "{", "]", strings.Repeat(" ", 10000) + "1"} {
		_, err := Load(strings.NewReader(tinyModel + tail))
		checkLoadError(t, fmt.Sprintf("tail %.20q", tail), err, "after the model object")
	}
}

func checkLoadError(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: loaded, want an error containing %q", what, want)
		return
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("%s: %.300q lacks %q", what, msg, want)
	}
	if len(msg) > 200 || strings.ContainsAny(msg, "\n\r") {
		t.Errorf("%s: message of %d bytes or several lines", what, len(msg))
	}
}

// edit returns tinyModel with the top-level fields of set replaced (a nil
// value deletes the field) and those of spec replaced in the map's spec.
func edit(t *testing.T, set, spec map[string]any) string {
	t.Helper()
	var f map[string]any
	if err := json.Unmarshal([]byte(tinyModel), &f); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(f, k)
		} else {
			f[k] = v
		}
	}
	sp := f["features"].(map[string]any)
	for k, v := range spec {
		sp[k] = v
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadDimensions: every dimension and product in a model file is
// checked at Load; in particular a file whose dimensions multiply past the
// int range (which the old Load accepted and predict then panicked on) is
// refused.
func TestLoadDimensions(t *testing.T) {
	lim := fmt.Sprint(limits.MaxDim)
	none := []any{}
	for _, c := range []struct {
		name      string
		set, spec map[string]any
		want      string
	}{
		// m = 2⁶², d = 4, K = 4: m·d and D·K are 2⁶⁴, 0 after overflow,
		// so empty w and weights matched them.
		{"D·K and m·d overflow", map[string]any{"classes": 4, "weights": none, "intercept": []any{0, 0, 0, 0}, "scaler": nil, "columns": nil},
			map[string]any{"m": 1 << 62, "features": 1 << 62, "input_dim": 4, "w": none}, "between 1 and " + lim},
		{"m·d overflows", map[string]any{"weights": none, "scaler": nil, "columns": nil},
			map[string]any{"m": 1 << 32, "features": 1 << 32, "input_dim": 1 << 32, "w": none}, "between 1 and " + lim},
		{"m·d past the limit", map[string]any{"scaler": nil, "columns": nil},
			map[string]any{"m": limits.MaxDim, "features": limits.MaxDim, "input_dim": limits.MaxDim, "w": none}, "would need 2 PiB (limit 8 GiB)"},
		{"negative m", nil, map[string]any{"m": -2, "features": -2}, "between 1 and"},
		{"zero input dimension", nil, map[string]any{"input_dim": 0}, "between 1 and"},
		{"input dimension past the limit", nil, map[string]any{"input_dim": limits.MaxDim + 1}, "between 1 and " + lim},
		{"features not m", nil, map[string]any{"features": 3}, "needs 2"},
		{"short projection", nil, map[string]any{"w": []any{1, 2, 3}}, "3 values"},
		{"huge classes", map[string]any{"classes": 1 << 40}, nil, "classes"},
		{"classes past int", map[string]any{"classes": 1e30}, nil, "classes"},
		{"one class", map[string]any{"classes": 1}, nil, "classes"},
		{"negative classes", map[string]any{"classes": -3}, nil, "classes"},
		// D = 2¹², K = 2¹⁹: the weight matrix would be 2³¹ values.
		{"D·K past the limit", map[string]any{"classes": 1 << 19, "intercept": none, "scaler": nil, "columns": nil},
			map[string]any{"m": 1 << 12, "features": 1 << 12, "input_dim": 1, "w": ones(1 << 12)}, "weight matrix of 4096×524288 would need 16 GiB (limit 8 GiB)"},
		{"classes past the limit", map[string]any{"classes": limits.MaxClasses + 1}, nil, "want 2 to 1048576"},
		{"regression with classes", map[string]any{"task": "regression", "classes": 2}, nil, "regression model with 2 classes"},
		{"weights short", map[string]any{"weights": []any{1, 2, 3}}, nil, "weights have 3"},
		{"intercept short", map[string]any{"intercept": []any{1}}, nil, "intercept 1"},
		{"three column names", map[string]any{"columns": []any{"a", "b", "c"}}, nil, "3 column names"},
		{"one column name", map[string]any{"columns": []any{"a"}}, nil, "1 column names"},
		{"scaler short", map[string]any{"scaler": map[string]any{"mean": []any{0}, "scale": []any{1, 1}}}, nil, "scaler"},
		{"zero scale", map[string]any{"scaler": map[string]any{"mean": []any{0, 0}, "scale": []any{1, 0}}}, nil, "scale"},
		{"negative lambda", map[string]any{"lambda": -1}, nil, "lambda"},
		{"negative jitter", map[string]any{"jitter": -1e-9}, nil, "jitter"},
		{"rbf gamma 0", nil, map[string]any{"kernel": "rbf", "form": "sincos", "features": 4, "gamma": 0}, "gamma"},
		{"bias of the wrong length", nil, map[string]any{"kernel": "rbf", "form": "cos", "gamma": 1, "b": []any{1}}, "bias"},
		{"unknown kernel", nil, map[string]any{"kernel": "poly"}, "unknown kernel"},
		{"unknown map kind", map[string]any{"map_kind": "quantum"}, nil, "quantum"},
		{"version 4", map[string]any{"version": 4}, nil, "version 4"},
		// Version 3 is version 2 with a temperature, which it must have.
		{"version 3 without a temperature", map[string]any{"version": 3}, nil, "version-3 file with temperature 0"},
		{"version 3 at temperature 1", map[string]any{"version": 3, "temperature": 1}, nil, "version-3 file with temperature 1"},
		{"negative temperature", map[string]any{"version": 3, "temperature": -2}, nil, "temperature -2"},
		{"version 2 with a temperature", map[string]any{"temperature": 2}, nil, "version-2 file with a temperature field"},
		{"tempered map kind", map[string]any{"version": 3, "temperature": 2, "map_kind": "tempered"}, nil, "temperature field"},
		{"not a model", map[string]any{"format": strings.Repeat("z", 1<<20)}, nil, "not a kernelkit model file"},
		{"long task", map[string]any{"task": strings.Repeat("t", 1<<20)}, nil, "unknown task"},
	} {
		_, err := Load(strings.NewReader(edit(t, c.set, c.spec)))
		checkLoadError(t, c.name, err, c.want)
	}
	// A JSON error quoting a literal of 20 MB is cut short.
	huge := strings.Replace(tinyModel, `"classes":2`, `"classes":1`+strings.Repeat("0", 20<<20), 1)
	_, err := Load(strings.NewReader(huge))
	checkLoadError(t, "20 MB number", err, "not a kernelkit model file")
	// The columns may be absent.
	if _, err := Load(strings.NewReader(edit(t, map[string]any{"columns": nil}, nil))); err != nil {
		t.Errorf("no column names: %v", err)
	}
}

func ones(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestFromSpecOverflow: features.FromSpec checks m, d and D against the
// limits and m·d for overflow before comparing m·d with len(W).
func TestFromSpecOverflow(t *testing.T) {
	for _, s := range []features.Spec{
		{Kernel: "arccos1", M: 1 << 62, Features: 1 << 62, InputDim: 4, W: []float64{}},
		{Kernel: "arccos1", M: 1 << 32, Features: 1 << 32, InputDim: 1 << 32, W: []float64{}},
		{Kernel: "arccos1", M: 1 << 33, Features: 1 << 33, InputDim: 1 << 31, W: []float64{}},
		{Kernel: "arccos1", M: 1 << 31, Features: 1 << 31, InputDim: 1 << 33},
		{Kernel: "rbf", Form: "sincos", Gamma: 1, M: 1 << 62, Features: math.MinInt64, InputDim: 4},
		{Kernel: "arccos1", M: limits.MaxDim, Features: limits.MaxDim, InputDim: limits.MaxDim},
		{Kernel: "arccos1", M: -1, Features: -1, InputDim: -1, W: []float64{1}},
		{Kernel: "rbf", Gamma: math.Inf(1), M: 1, Features: 1, InputDim: 1, W: []float64{1}, B: []float64{0}},
		{Kernel: "rbf", Gamma: 1, M: 1, Features: 1, InputDim: 1, W: []float64{1}, B: []float64{math.NaN()}},
	} {
		if mp, err := features.FromSpec(s); err == nil {
			t.Errorf("spec m=%d D=%d d=%d γ=%v b=%v accepted: map of %d×%d", s.M, s.Features, s.InputDim, s.Gamma, s.B, mp.Dim(), mp.InputDim())
		}
	}
}

// FuzzLoad loads arbitrary bytes as a model file. Invariants: no panic;
// an error is one line of at most 200 bytes; on success every dimension is
// within its limit and the shapes agree (classes, D×K weights, K
// intercepts, column names and scaler of the input dimension, finite
// weights), predicting three rows gives a 3×K matrix or an error but never
// a panic, and the model saved and loaded again predicts the same bits and
// saves to the same bytes.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Load(bytes.NewReader(in))
		if err != nil {
			if msg := err.Error(); len(msg) > 200 || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error message of %d bytes or several lines: %.300q", len(msg), msg)
			}
			return
		}
		k := 1
		switch m.Task {
		case Classification:
			if m.Classes < 2 || m.Classes > limits.MaxClasses {
				t.Fatalf("%d classes", m.Classes)
			}
			k = m.Classes
		case Regression:
			if m.Classes != 0 {
				t.Fatalf("regression with %d classes", m.Classes)
			}
		default:
			t.Fatalf("task %q", m.Task)
		}
		dim, in1 := m.Map.Dim(), m.Map.InputDim()
		if limits.Dim("D", dim) != nil || limits.Dim("d", in1) != nil {
			t.Fatalf("map of %d×%d", dim, in1)
		}
		if r, c := m.Linear.W.Dims(); r != dim || c != k || len(m.Linear.B) != k {
			t.Fatalf("weights %d×%d and %d intercepts for D = %d, K = %d", r, c, len(m.Linear.B), dim, k)
		}
		if (m.Columns != nil && len(m.Columns) != in1) || (m.Scaler != nil && (len(m.Scaler.Mean) != in1 || len(m.Scaler.Scale) != in1)) {
			t.Fatalf("%d columns and scaler %v for %d inputs", len(m.Columns), m.Scaler, in1)
		}
		for _, v := range append(append([]float64(nil), m.Linear.W.RawMatrix().Data...), m.Linear.B...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite weight %v", v)
			}
		}
		x := mat.NewDense(3, in1, nil)
		for j := 0; j < in1; j++ {
			x.Set(1, j, 0.5)
			x.Set(2, j, -float64(j+1))
		}
		p, perr := m.Predict(x)
		if perr == nil {
			if r, c := p.Dims(); r != 3 || c != k {
				t.Fatalf("predictions %d×%d, want 3×%d", r, c, k)
			}
		}
		var saved bytes.Buffer
		if err := m.Save(&saved); err != nil {
			t.Fatalf("save: %v", err)
		}
		back, err := Load(bytes.NewReader(saved.Bytes()))
		if err != nil {
			t.Fatalf("load what was saved: %v", err)
		}
		var again bytes.Buffer
		if err := back.Save(&again); err != nil || !bytes.Equal(again.Bytes(), saved.Bytes()) {
			t.Fatalf("saved twice, the bytes differ: %v", err)
		}
		q, qerr := back.Predict(x)
		if (perr == nil) != (qerr == nil) || (perr == nil && !sameBits(p, q)) {
			t.Fatalf("reloaded model predicts differently: %v, %v", perr, qerr)
		}
	})
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b *mat.Dense) bool {
	x, y := a.RawMatrix().Data, b.RawMatrix().Data
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// TestLoadDuplicateColumns: a model file naming one input column twice is
// refused (predict, which matches columns by name, could never use it).
func TestLoadDuplicateColumns(t *testing.T) {
	bad := strings.Replace(tinyModel, `"columns":["a","b"]`, `"columns":["a","a"]`, 1)
	if _, err := Load(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("columns a, a: %v", err)
	}
}
