package nystrom_test

import (
	"bytes"
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

// A model fitted on Nyström features (built by name from the catalog, with
// landmarks chosen from the standardised training rows) is saved and
// loaded like any other: the loaded model's predictions are identical to
// the bit, and its map is a Nyström map again.
func TestModelRoundTrip(t *testing.T) {
	x, _ := sampler.Gaussian{}.Sample(300, 5, 1)
	y := make([]float64, 300)
	for i := range y {
		if x.At(i, 0)*x.At(i, 1)+0.3*x.At(i, 2) > 0 {
			y[i] = 1
		}
	}
	train := &data.Dataset{X: x, Y: y}
	sc, err := data.FitScaler(x)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := sc.Transform(x)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nystrom", "nystrom/kmeans", "nystrom/arccos1/leverage"} {
		mp, err := catalog.Default().Map(name, features.Options{InputDim: 5, Features: 40, Gamma: 0.2, Seed: 3, Data: xs})
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.Fit(context.Background(), model.Options{Task: model.Classification, Map: mp, Lambda: 0.1, Standardize: true}, train)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := m.Save(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := model.Load(&buf)
		if err != nil {
			t.Fatal(err)
		}
		test, _ := sampler.Gaussian{}.Sample(50, 5, 2)
		a, err := m.Predict(test)
		if err != nil {
			t.Fatal(err)
		}
		b, err := back.Predict(test)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a, b) {
			t.Errorf("%s: loaded model predicts differently", name)
		}
		if _, ok := back.Map.(interface{ Rank() int }); !ok {
			t.Errorf("%s: loaded map is %T", name, back.Map)
		}
		ev, err := m.Evaluate(train, 100)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: training accuracy %.3f, Gram error %.4f", name, ev.Accuracy, ev.GramError)
		if ev.GramRows != 100 || ev.Accuracy < 0.8 {
			t.Errorf("%s: evaluation %+v", name, ev)
		}
	}
}
