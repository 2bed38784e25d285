package krr

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
)

// refData returns the small data set of the scikit-learn reference: rows
// with exactly representable entries, regression targets, one-hot targets
// of 3 classes and 5 test rows.
func refData() (x, y, onehot, test *mat.Dense) {
	const n, d = 12, 3
	x = mat.NewDense(n, d, nil)
	y = mat.NewDense(n, 1, nil)
	onehot = mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64((7*i+3*j)%11)/5-1)
		}
		y.Set(i, 0, float64((5*i)%7)/3-1+x.At(i, 0))
		onehot.Set(i, i%3, 1)
	}
	test = mat.NewDense(5, d, nil)
	for i := 0; i < 5; i++ {
		for j := 0; j < d; j++ {
			test.Set(i, j, float64((4*i+5*j)%9)/4-1)
		}
	}
	return
}

// Exact KRR without intercept matches scikit-learn 1.2.1's KernelRidge
// (dual coefficients and predictions, regression and one-vs-rest one-hot
// targets, RBF and polynomial kernels) to 1e-8, far above what either side's
// rounding allows: K + αI has condition number at most (n·max K_ii + α)/α,
// 121 for the RBF kernel (K_ii = 1) and 625 for the polynomial one
// (K_ii ≤ (0.5·3 + 1)³ ≈ 15.6), so both solves are accurate to κ·γ_n ≈
// 1e-12 relative. The reference numbers were
// printed by /usr/bin/python3 (Debian's python3-sklearn) running
//
//	import numpy as np
//	from sklearn.kernel_ridge import KernelRidge
//	n, d = 12, 3
//	X = np.array([[((7*i + 3*j) % 11)/5 - 1 for j in range(d)] for i in range(n)])
//	y = np.array([((5*i) % 7)/3 - 1 + X[i, 0] for i in range(n)])
//	T = np.array([[((4*i + 5*j) % 9)/4 - 1 for j in range(d)] for i in range(5)])
//	Y = np.zeros((n, 3)); Y[np.arange(n), np.arange(n) % 3] = 1
//	for name, kr in [("rbf", KernelRidge(alpha=0.1, kernel="rbf", gamma=0.4)),
//	                 ("poly", KernelRidge(alpha=0.3, kernel="poly", gamma=0.5, coef0=1, degree=3))]:
//	    print(name, "reg", repr(kr.fit(X, y).predict(T).tolist()))
//	    print(name, "dual", repr(kr.dual_coef_.tolist()))
//	    print(name, "ovr", repr(kr.fit(X, Y).predict(T).ravel().tolist()))
func TestMatchesScikitLearn(t *testing.T) {
	x, y, onehot, test := refData()
	for _, tc := range []struct {
		name           string
		k              kernel.Kernel
		lambda         float64
		reg, dual, ovr []float64
	}{
		{"rbf", kernel.RBF{Gamma: 0.4}, 0.1,
			[]float64{-1.2312840149855144, 0.08425768019979518, 0.40769768705663934, 0.3808382313473637, -0.316158250426825},
			[]float64{-12.3185151910463, 0.5258534375338186, 0.31376496052824165, -0.8231000438966035, 7.361446888514441, 1.478194110651035, -0.0467465146745438, -7.707114849466414, 4.103518226522186, 1.5451851104080079, -3.033465729036814, 7.681484808953643},
			[]float64{0.17514130915598608, 0.45384441454371754, 0.17311939997908268, 0.7248416536530207, -0.10889276966144829, 0.3579456416741047, 0.4786537923404414, 0.46966933733804184, -0.1060441244234117, -0.1049755447023044, 0.7945798515759889, 0.2747805283114886, 0.4405337184878197, 0.3235964468100118, 0.020526388276136905}},
		{"poly", kernel.Polynomial{Gamma: 0.5, Coef0: 1, Degree: 3}, 0.3,
			[]float64{-1.9394530803289551, 0.14794898623400599, 0.5024329378368444, 0.4368193778883551, -0.7301741190426931},
			[]float64{-3.9110383262604245, -0.3078092514696288, 0.08201086057451684, -0.1949123527052283, 2.469514392872056, 0.3483256083429306, -0.06744402087371207, -2.1197906260677777, 1.2370870385713735, 0.3725021156581198, -0.6803015049913467, 2.7556283404062603},
			[]float64{0.2845188643108069, 0.5995064354498508, 0.0075982613508146215, 0.6353739674007145, -0.09208010779517778, 0.32862666552736813, 0.6322061934267934, 0.6167475205526622, -0.0924598780068363, -0.08559477176238245, 0.7165434433143907, 0.24001046837489842, 0.5498304100930653, 0.5277671719550034, -0.18809709352496803}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Kernel: tc.k, Lambda: tc.lambda}
			check := func(what string, got, want []float64) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
				}
				for i, w := range want {
					if math.Abs(got[i]-w) > 1e-8*math.Max(1, math.Abs(w)) {
						t.Errorf("%s[%d] = %.15g, scikit-learn %.15g", what, i, got[i], w)
					}
				}
			}
			m, err := Fit(x, y, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(test)
			if err != nil {
				t.Fatal(err)
			}
			check("regression", p.RawMatrix().Data, tc.reg)
			check("dual", m.Alpha.RawMatrix().Data, tc.dual)
			if m.B[0] != 0 {
				t.Errorf("intercept %v without Intercept", m.B[0])
			}
			m, err = Fit(x, onehot, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p, err = m.Predict(test)
			if err != nil {
				t.Fatal(err)
			}
			check("one-vs-rest", p.RawMatrix().Data, tc.ovr)
		})
	}
}

// With an intercept, exact KRR is ridge regression with an unpenalised
// intercept in the kernel's feature space: for the linear kernel xᵀy its
// predictions equal linear.Fit on the raw rows to 1e-10, and adding a
// constant to the targets adds it to the predictions.
func TestInterceptIsLinearRidge(t *testing.T) {
	const n, d = 40, 4
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, math.Sin(float64(3*i+7*j+1))+0.3*float64(j))
		}
		y.Set(i, 0, math.Cos(float64(i))+x.At(i, 1))
		y.Set(i, 1, 5+float64(i%4))
	}
	lin := kernel.Polynomial{Gamma: 1, Coef0: 0, Degree: 1}
	m, err := Fit(x, y, Config{Kernel: lin, Lambda: 0.7, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	s := linear.NewStats(d, 2)
	if err := s.Add(x, y); err != nil {
		t.Fatal(err)
	}
	lm, err := linear.Fit(s, 0.7, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lm.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(got, want, 1e-10) {
		t.Errorf("exact KRR with intercept differs from linear ridge by %.3g", maxDiff(got, want))
	}
	shifted := mat.DenseCopyOf(y)
	for i := 0; i < n; i++ {
		shifted.Set(i, 0, y.At(i, 0)+100)
	}
	ms, err := Fit(x, shifted, Config{Kernel: kernel.RBF{Gamma: 0.3}, Lambda: 0.2, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Fit(x, y, Config{Kernel: kernel.RBF{Gamma: 0.3}, Lambda: 0.2, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ms.Predict(x)
	b, _ := m2.Predict(x)
	for i := 0; i < n; i++ {
		if math.Abs(a.At(i, 0)-b.At(i, 0)-100) > 1e-9 || math.Abs(a.At(i, 1)-b.At(i, 1)) > 1e-9 {
			t.Fatalf("row %d: shifting the targets by 100 moved the predictions by %.12g and %.3g", i, a.At(i, 0)-b.At(i, 0), a.At(i, 1)-b.At(i, 1))
		}
	}
}

func maxDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

// Above MaxRows Fit returns an error that states the memory the kernel
// matrix would need, before allocating it; bad parameters are errors.
func TestErrors(t *testing.T) {
	n := MaxRows + 1
	_, err := Fit(mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil), Config{Kernel: kernel.RBF{Gamma: 1}, Lambda: 1})
	if err == nil || !strings.Contains(err.Error(), "8.0 GiB") || !strings.Contains(err.Error(), fmt.Sprint(n)) {
		t.Errorf("size error %v, want the rows and 8.0 GiB", err)
	}
	if err := CheckRows(100000); err == nil || !strings.Contains(err.Error(), "74.5 GiB") {
		t.Errorf("CheckRows(100000) = %v, want 74.5 GiB", err)
	}
	x, y, _, _ := refData()
	for name, cfg := range map[string]Config{
		"lambda 0":  {Kernel: kernel.RBF{Gamma: 1}, Lambda: 0},
		"lambda ∞":  {Kernel: kernel.RBF{Gamma: 1}, Lambda: math.Inf(1)},
		"no kernel": {Lambda: 1},
		"bad gamma": {Kernel: kernel.RBF{Gamma: -1}, Lambda: 1},
	} {
		if _, err := Fit(x, y, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Fit(x, mat.NewDense(3, 1, nil), Config{Kernel: kernel.RBF{Gamma: 1}, Lambda: 1}); err == nil {
		t.Error("target rows mismatch accepted")
	}
	bad := mat.DenseCopyOf(y)
	bad.Set(2, 0, math.NaN())
	if _, err := Fit(x, bad, Config{Kernel: kernel.RBF{Gamma: 1}, Lambda: 1}); err == nil {
		t.Error("NaN target accepted")
	}
	if _, err := Fit(x, y, Config{Kernel: kernel.Chi2{}, Lambda: 1}); err == nil {
		t.Error("negative rows accepted by the chi-squared kernel")
	}
}

// The kernel-columns map with the dual coefficients as linear weights is
// the exact model, and it round-trips through its spec.
func TestColumns(t *testing.T) {
	x, y, _, test := refData()
	m, err := Fit(x, y, Config{Kernel: kernel.ArcCos{Order: 1}, Lambda: 0.5, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(test)
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Columns()
	if err != nil {
		t.Fatal(err)
	}
	kind, raw, err := features.Encode(c)
	if err != nil || kind != ColumnsSpecKind {
		t.Fatal(kind, err)
	}
	back, err := DecodeColumns(raw)
	if err != nil {
		t.Fatal(err)
	}
	z, err := features.Apply(back, test)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Linear().Predict(z)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(got, want, 1e-12) {
		t.Errorf("columns model differs from Predict by %.3g", maxDiff(got, want))
	}
	if _, err := ColumnsFromSpec(ColumnsSpec{Kernel: kernel.Spec{Name: "rbf", Gamma: 1}, Rows: 2, InputDim: 1, X: []float64{1}}); err == nil {
		t.Error("short spec accepted")
	}
}
