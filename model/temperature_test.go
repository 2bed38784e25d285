package model

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// temperatureSets returns 600 training and 200 test rows of the letter
// data.
func temperatureSets(t *testing.T) (train, test *data.Dataset) {
	t.Helper()
	head, rest, err := data.Letter().SplitAt(600)
	if err != nil {
		t.Fatal(err)
	}
	test, _, err = rest.SplitAt(200)
	if err != nil {
		t.Fatal(err)
	}
	return head, test
}

// saveBytes returns the model file of m.
func saveBytes(t *testing.T, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTemperatureModelFile: a model whose softmax map has a temperature
// (a drawn map with Features.Temperature, the registry's OPRF map with
// MapOptions.Temperature) is saved as a version-3 file holding the
// unscaled map and the temperature; it loads to the same predictions bit
// for bit and saves to the same bytes. The loader applies the
// temperature: the file with another temperature predicts otherwise.
func TestTemperatureModelFile(t *testing.T) {
	train, test := temperatureSets(t)
	reg := catalog.Default()
	fits := map[string]func() *Model{
		"softmax/positive": func() *Model {
			m, err := Fit(context.Background(), Options{Task: Classification, Lambda: 0.5, Standardize: true,
				Features: features.Config{Kernel: "softmax", Form: "positive", Features: 64, Seed: 2, Temperature: 8}}, train)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		"oprf": func() *Model {
			_, m, err := RunJob(context.Background(), Job{Model: Options{Task: Classification, Lambda: 0.5, Standardize: true},
				Train: train, Test: test, MapName: "oprf", Registry: reg,
				MapOptions: features.Options{Features: 64, Seed: 2, Temperature: 8}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	}
	for name, fit := range fits {
		m := fit()
		raw := saveBytes(t, m)
		var f map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if string(f["version"]) != "3" || string(f["temperature"]) != "8" || strings.Contains(string(f["map_kind"]), "tempered") {
			t.Errorf("%s: version %s, temperature %s, map kind %s; want 3, 8 and the unscaled map's kind", name, f["version"], f["temperature"], f["map_kind"])
		}
		inner, _ := features.Untemper(m.Map)
		kind, spec, err := features.Encode(inner)
		if err != nil || string(f["map_kind"]) != strconv.Quote(kind) || !bytes.Equal(f["features"], spec) {
			t.Errorf("%s: the file's map is not the unscaled map (%v)", name, err)
		}
		back, err := LoadWith(bytes.NewReader(raw), reg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, tau := features.Untemper(back.Map); tau != 8 {
			t.Errorf("%s: loaded map has τ = %v", name, tau)
		}
		p1, _ := m.Predict(test.X)
		p2, err := back.Predict(test.X)
		if err != nil || !mat.Equal(p1, p2) {
			t.Errorf("%s: loaded model predicts differently (%v)", name, err)
		}
		if again := saveBytes(t, back); !bytes.Equal(again, raw) {
			t.Errorf("%s: a loaded tempered model saves to other bytes", name)
		}
		other, err := LoadWith(bytes.NewReader(bytes.Replace(raw, []byte(`"temperature":8,`), []byte(`"temperature":4,`), 1)), reg)
		if err != nil {
			t.Fatal(err)
		}
		if p3, _ := other.Predict(test.X); mat.Equal(p1, p3) {
			t.Errorf("%s: the file's temperature does not change the predictions", name)
		}
	}
}

// TestNoTemperatureSameBytes: a model without a temperature, or at τ = 1,
// is the version-2 file of before, byte for byte, with no temperature
// field; the stored models of model/testdata (versions 1 and 2, a softmax
// map among them) load as τ = 1 and the version-2 ones save to their own
// bytes.
func TestNoTemperatureSameBytes(t *testing.T) {
	train, _ := temperatureSets(t)
	var files [][]byte
	for _, tau := range []float64{0, 1} {
		m, err := Fit(context.Background(), Options{Task: Classification, Lambda: 0.5, Standardize: true,
			Features: features.Config{Kernel: "softmax", Form: "trig", Features: 32, Seed: 4, Temperature: tau}}, train)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Map.(*features.Map); !ok {
			t.Errorf("τ = %v: the map is %T, want the plain *features.Map", tau, m.Map)
		}
		files = append(files, saveBytes(t, m))
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("τ = 1 and no temperature give different files")
	}
	if !bytes.Contains(files[0], []byte(`"version":2,`)) || bytes.Contains(files[0], []byte("temperature")) {
		t.Error("a model without a temperature is not a version-2 file without a temperature field")
	}
	for _, name := range []string{"tiny", "tiny-regression", "version1", "fitted-sincos", "positive-favor", "snnk-relu"} {
		raw := corpusFile(t, name)
		m, err := LoadWith(bytes.NewReader(raw), catalog.Default())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, tau := features.Untemper(m.Map); tau != 1 {
			t.Errorf("%s: loads with τ = %v", name, tau)
		}
		if bytes.Contains(raw, []byte(`"version":2`)) {
			if again := saveBytes(t, m); !bytes.Equal(again, raw) {
				t.Errorf("%s: saves to other bytes:\n%s\nwant\n%s", name, again, raw)
			}
		}
	}
}

// corpusFile returns the bytes of a FuzzLoad seed of model/testdata.
func corpusFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzLoad", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lit := strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(s)
}

// TestExactTemperature: exact kernel ridge with the softmax kernel at
// temperature τ is exact kernel ridge of exp(xᵀy) on the rows scaled by
// 1/√τ (the same predictions bit for bit); its model file (version 3)
// reproduces them, and the temperature is refused for other kernels.
func TestExactTemperature(t *testing.T) {
	train, test := temperatureSets(t)
	// Standardised here, so that the scaled rows below are the rows the
	// fit at τ sees (a fit's own scaler would undo the scaling).
	sc, err := data.FitScaler(train.X)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*data.Dataset{train, test} {
		if d.X, err = sc.Transform(d.X); err != nil {
			t.Fatal(err)
		}
	}
	const tau = 8.0
	s := 1 / math.Sqrt(tau)
	job := func(tr, te *data.Dataset, temperature float64, kern string) (*JobResult, *Model, error) {
		return RunJob(context.Background(), Job{Exact: true, Train: tr, Test: te, Model: Options{Task: Classification, Lambda: 0.5,
			Features: features.Config{Kernel: kern, Gamma: 0.1, Temperature: temperature}}}, nil)
	}
	r, m, err := job(train, test, tau, "softmax")
	if err != nil {
		t.Fatal(err)
	}
	if r.Temperature != tau {
		t.Errorf("result temperature %v", r.Temperature)
	}
	scale := func(d *data.Dataset) *data.Dataset {
		c := *d
		var x mat.Dense
		x.Scale(s, d.X)
		c.X = &x
		return &c
	}
	r0, m0, err := job(scale(train), scale(test), 0, "softmax")
	if err != nil {
		t.Fatal(err)
	}
	if *r.TestAccuracy != *r0.TestAccuracy {
		t.Errorf("test accuracy %v at τ, %v on the scaled rows", *r.TestAccuracy, *r0.TestAccuracy)
	}
	p, _ := m.Predict(test.X)
	p0, _ := m0.Predict(scale(test).X)
	if !mat.Equal(p, p0) {
		t.Error("exact fit at τ predicts otherwise than the exact fit on the scaled rows")
	}
	back, err := Load(bytes.NewReader(saveBytes(t, m)))
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := back.Predict(test.X); err != nil || !mat.Equal(p, p2) {
		t.Errorf("loaded exact model predicts differently (%v)", err)
	}
	if _, _, err := job(train, test, tau, "rbf"); err == nil || !strings.Contains(err.Error(), "softmax") {
		t.Errorf("exact rbf with a temperature: %v", err)
	}
}

// TestGramErrorTempered: the Gram error of a tempered map is measured
// against exp(xᵀy/τ): that of the unscaled map on the scaled rows.
func TestGramErrorTempered(t *testing.T) {
	_, test := temperatureSets(t)
	x := test.X.Slice(0, 100, 0, test.Cols()).(*mat.Dense)
	tm, err := features.Draw(features.Config{Kernel: "softmax", Form: "trig", Features: 128, Seed: 1, Temperature: 300}, test.Cols())
	if err != nil {
		t.Fatal(err)
	}
	inner, _ := features.Untemper(tm)
	var xs mat.Dense
	xs.Scale(1/math.Sqrt(300), x)
	got, err := GramError(tm, x)
	if err != nil {
		t.Fatal(err)
	}
	want, err := GramError(inner, &xs)
	if err != nil || got != want || !(got > 0 && got < 1) {
		t.Errorf("Gram error of the tempered map %v, of the map on the scaled rows %v (%v)", got, want, err)
	}
}
