package nnkernel

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// letterSplit returns rows [0, n) of the embedded letter data split at
// row ntrain.
func letterSplit(t *testing.T, n, ntrain int) (train, test *data.Dataset) {
	t.Helper()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	train, test, err := data.Letter().Subset(idx).SplitAt(ntrain)
	if err != nil {
		t.Fatal(err)
	}
	return train, test
}

// TestPointwise checks Sec. 4.1 at small sizes: both estimators are
// unbiased Monte Carlo averages over m features, so their mean relative
// error falls like 1/√m, a factor 4 from m = 8 to m = 128.
func TestPointwise(t *testing.T) {
	var last int
	res, err := Pointwise(context.Background(), PointwiseConfig{Features: []int{8, 128}, Draws: 100, Seed: 1},
		func(done, total int) { last = done })
	if err != nil {
		t.Fatal(err)
	}
	if last != 2*2*100 {
		t.Errorf("progress ended at %d, want 400", last)
	}
	if len(res.Rows) != 4 {
		t.Fatalf("%d rows, want 4", len(res.Rows))
	}
	for i, layer := range []string{"sin", "relu"} {
		lo, hi := res.Rows[2*i], res.Rows[2*i+1]
		if lo.Layer != layer || hi.Layer != layer || lo.Features != 8 || hi.Features != 128 {
			t.Fatalf("rows %+v, %+v", lo, hi)
		}
		if r := lo.MeanRel / hi.MeanRel; r < 2.5 || r > 6.5 {
			t.Errorf("%s: error ratio m = 8 to 128 is %.2f (%.4f / %.4f), want about √16 = 4", layer, r, lo.MeanRel, hi.MeanRel)
		}
		if !(hi.StdRel > 0) || hi.MeanRel > 0.5 {
			t.Errorf("%s at m = 128: %+v", layer, hi)
		}
	}
	for _, c := range []PointwiseConfig{{Features: []int{8}, Draws: 1}, {Features: []int{0}, Draws: 10}, {Draws: 10}, {Features: []int{1 << 30}, Draws: 10}} {
		if _, err := Pointwise(context.Background(), c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	var b bytes.Buffer
	if err := res.Table().Render(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "SNNK pointwise estimation (Sec. 4.1): d = 2000, entries Unif(0,1)/√d, 100 draws; mean relative error\n\n  layer    m  mean rel. error") {
		t.Errorf("table:\n%s", b.String())
	}
	if p := res.Plot(); len(p.Series) != 2 || len(p.Series[1].X) != 2 || p.Series[1].Y[1] != res.Rows[3].MeanRel {
		t.Errorf("plot %+v", p)
	}
}

// TestBundle checks that the bundled network's error falls with the
// number of random features (Monte Carlo: by about √32 from m = 8 to 256).
func TestBundle(t *testing.T) {
	res, err := Bundle(context.Background(), BundleConfig{Features: []int{8, 256}, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].Layer != "bundle" || res.Rows[1].Features != 256 {
		t.Fatalf("rows %+v", res.Rows)
	}
	if r := res.Rows[0].MeanRel / res.Rows[1].MeanRel; r < 3 {
		t.Errorf("error ratio m = 8 to 256 is %.2f (%+v), want about √32 ≈ 5.7", r, res.Rows)
	}
	var b bytes.Buffer
	if err := res.Render(&b); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); len(lines) != 5 || !strings.HasSuffix(lines[0], "mean of 4 draws") ||
		strings.Join(strings.Fields(lines[1]), " ") != "m rel. error ± std" {
		t.Errorf("rendered:\n%s", b.String())
	}
	if _, err := Bundle(context.Background(), BundleConfig{}, nil); err == nil {
		t.Error("no feature counts accepted")
	}
}

// TestClassify runs the classification study on 600 letter rows (one
// seed, one epoch): parameter counts are exact, the closed-form bundled
// model is far above chance (1/26) and reproducible.
func TestClassify(t *testing.T) {
	train, test := letterSplit(t, 600, 420)
	cfg := ClassifyConfig{Name: "letter600", Train: train, Test: test, Hidden: 8, M: 4, Epochs: 1, Seeds: 1, Seed: 4}
	res, err := Classify(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	const d, h, k, m = 16, 8, 26, 4
	want := []struct {
		model  string
		params int
	}{
		{"MLP (dense hidden layer, ReLU)", d*h + h + h*k + k},
		{"ReLU-SNNK hidden layer (m=4)", m*h + h*k + k},
		{"cos-SNNK hidden layer (m=4, dim 16)", 4*m*h + h*k + k},
		{"bundled cos-SNNK, closed form (m=16)", 16*m*k + k},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(res.Rows), len(want))
	}
	for i, w := range want {
		r := res.Rows[i]
		if r.Dataset != "letter600" || r.Model != w.model || r.Params != w.params || r.Seeds != 1 || r.AccStd != 0 {
			t.Errorf("row %d: %+v, want model %q with %d parameters", i, r, w.model, w.params)
		}
		if !(r.Accuracy >= 0 && r.Accuracy <= 1) || !(r.Seconds >= 0) {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	closed := res.Rows[3].Accuracy
	if closed < 3.0/k {
		t.Errorf("closed-form accuracy %.4f, want well above chance 1/26", closed)
	}
	again, err := Classify(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Rows[3].Accuracy != closed {
		t.Errorf("closed-form accuracy %v then %v", closed, again.Rows[3].Accuracy)
	}
	bad := cfg
	bad.M = 0
	if _, err := Classify(context.Background(), bad, nil); err == nil {
		t.Error("m = 0 accepted")
	}
	// More seeds than the repetition limit are refused before any runs.
	bad = cfg
	bad.Seeds = limits.MaxCount + 1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "seeds must be between 1 and 1048576") {
		t.Errorf("%d seeds: error %v", bad.Seeds, err)
	}
	var b bytes.Buffer
	if err := res.Table().Render(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "classification (hidden width 8, SNNK towers of 4 random features, 1 epochs, Adam, 1 seeds; GoMLX pure-Go backend)\n\n") {
		t.Errorf("table:\n%s", b.String())
	}
}
