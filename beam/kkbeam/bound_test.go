package kkbeam

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// The bound of the Beam fit against model.Fit.
//
// Both fits compute the same sums — the scaler's moments and the ridge
// statistics ZᵀZ, ZᵀY, Σz, Σy over the same rows — in another order. A
// sum of n terms computed in any order is within γ_n·Σ|terms| of the
// exact one, γ_n = n·u/(1 − n·u), u = 2⁻⁵³ (Higham, Accuracy and
// Stability of Numerical Algorithms, §4.2), so two orders differ by at
// most 2γ_n·Σ|terms|. Propagated:
//
//   - scaler: |Δmean_j| ≤ 2γ_n·max|x_j| and |Δscale_j|/scale_j ≤
//     2γ_n·(1 + max x_j²/var_j), so a standardised entry moves by
//     δ_ij ≤ |Δmean_j|/scale_j + |x'_ij|·|Δscale_j|/scale_j;
//   - features: z_k = √(2/D)·cos(w_kᵀx' + b_k) moves by at most
//     √(2/D)·Σ_j |w_kj|·δ_ij, which bounds ‖ΔZ‖_F;
//   - statistics: centring is a projection, so with A = Z_cᵀZ_c + λI and
//     B = Z_cᵀY_c, ‖ΔA‖₂ ≤ 6γ_n‖Z‖_F² + 2‖Z‖_F‖ΔZ‖_F + ‖ΔZ‖_F² (the sums
//     of ZᵀZ and Σz, and the features' change) and ‖ΔB‖₂ ≤
//     6γ_n‖Z‖_F‖Y‖_F + ‖ΔZ‖_F‖Y‖_F;
//   - weights: W = A⁻¹B, so ‖ΔW‖₂/‖W‖₂ ≤ κ(εA + εB)/(1 − κ·εA), κ = κ₂(A),
//     εA = ‖ΔA‖₂/‖A‖₂, εB = ‖ΔB‖₂/‖B‖₂; in the max norm the tests use,
//     max|ΔW|/max|W| ≤ √(D·K) times that.
//
// With row weights w (ds.Weights) the sums are of w_i-weighted terms:
// the bound holds for the rows scaled by √w_i (Z_w = diag(√w)Z, Y_w
// likewise, centred on their weighted means), the scaler's weighted
// moments gaining a factor 2 for their division by Σw (computed in
// another order too). With several targets (ds.Targets) Y is their n×K
// matrix.
//
// weightBound evaluates this bound for want, model.Fit's model of the
// rows ds (a map of package features of the cos form), on those rows.
// It is a worst-case bound: the measured differences are orders of
// magnitude below it, and it is the tolerance of the weights' test.
func weightBound(t *testing.T, want *model.Model, ds *data.Dataset) float64 {
	t.Helper()
	b, _ := weightBounds(t, want, ds)
	return b
}

// weightBounds returns weightBound's bound in the max norm and, before
// the factor √(D·K), in the spectral norm.
func weightBounds(t *testing.T, want *model.Model, ds *data.Dataset) (maxNorm, spectral float64) {
	t.Helper()
	// Without a scaler both fits map the same input bits by the same map
	// (any map: a Nyström map's landmarks are the same rows), so the
	// features are the same and only the sums' order differs (ΔZ = 0).
	var spec features.Spec
	if want.Scaler != nil {
		mp, ok := want.Map.(*features.Map)
		if !ok {
			t.Fatal("weightBound of standardised rows needs a map of package features")
		}
		if spec = mp.Spec(); spec.Form != "cos" {
			t.Fatalf("weightBound of standardised rows needs the cos form, got %q", spec.Form)
		}
	}
	const u = 0x1p-53
	n, d := ds.X.Dims()
	gamma := float64(n) * u / (1 - float64(n)*u)
	w := ds.Weights
	if w == nil {
		w = make([]float64, n)
		for i := range w {
			w[i] = 1
		}
	}
	var sw float64
	for _, v := range w {
		sw += v
	}
	moment := 2 * gamma // the scaler's moments' factor
	if ds.Weights != nil {
		moment *= 2
	}
	z, err := want.Features(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	_, dim := z.Dims()
	// The standardised inputs' perturbation δ_ij, and the features'.
	var dz2 float64
	if want.Scaler != nil {
		dmean, drel := make([]float64, d), make([]float64, d)
		for j := range d {
			var top, mean, v float64
			for i := range n {
				top = math.Max(top, math.Abs(ds.X.At(i, j)))
				mean += w[i] * ds.X.At(i, j)
			}
			mean /= sw
			for i := range n {
				v += w[i] * (ds.X.At(i, j) - mean) * (ds.X.At(i, j) - mean)
			}
			v /= sw
			dmean[j] = moment * top
			drel[j] = moment * (1 + top*top/math.Max(v, math.SmallestNonzeroFloat64))
		}
		xs, err := want.Scaler.Transform(ds.X)
		if err != nil {
			t.Fatal(err)
		}
		delta := make([]float64, d)
		for i := range n {
			for j := range d {
				delta[j] = dmean[j]/want.Scaler.Scale[j] + math.Abs(xs.At(i, j))*drel[j]
			}
			for k := range dim {
				var s float64
				for j := range d {
					s += math.Abs(spec.W[k*d+j]) * delta[j]
				}
				dz := math.Sqrt(2/float64(dim)) * s
				dz2 += w[i] * dz * dz
			}
		}
	}
	dz := math.Sqrt(dz2)
	y := targetsOf(t, want, ds)
	_, k := y.Dims()
	zw, yw := scaleRows(z, w), scaleRows(y, w)
	zf, yf := mat.Norm(zw, 2), mat.Norm(yw, 2) // Frobenius norms
	a, b := centred(z, y, w, want.Linear.Lambda)
	na, nb := normTwo(a), normTwo(b)
	kappa := mat.Cond(a, 2)
	ea := (6*gamma*zf*zf + 2*zf*dz + dz*dz) / na
	eb := (6*gamma*zf*yf + dz*yf) / nb
	if kappa*ea >= 1 {
		t.Fatalf("weightBound: κ·εA = %.3g ≥ 1, no bound", kappa*ea)
	}
	spectral = kappa * (ea + eb) / (1 - kappa*ea)
	maxNorm = math.Sqrt(float64(dim*k)) * spectral
	t.Logf("bound: n = %d, κ₂(A) = %.3g, εA = %.3g, εB = %.3g: weights within %.3g relative (max norm)", n, kappa, ea, eb, maxNorm)
	return maxNorm, spectral
}

// targetsOf returns the ridge targets of ds for m: one-hot classes, or
// the regression target.
func targetsOf(t *testing.T, m *model.Model, ds *data.Dataset) *mat.Dense {
	t.Helper()
	if ds.Targets != nil {
		return mat.DenseCopyOf(ds.Targets)
	}
	if m.Task != model.Classification {
		return mat.NewDense(len(ds.Y), 1, append([]float64(nil), ds.Y...))
	}
	labels := make([]int, len(ds.Y))
	for i, v := range ds.Y {
		labels[i] = int(v)
	}
	y, err := linear.OneHot(labels, m.Classes)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// scaleRows returns the rows of m scaled by √w_i.
func scaleRows(m *mat.Dense, w []float64) *mat.Dense {
	out := mat.DenseCopyOf(m)
	for i, v := range w {
		r := out.RawRowView(i)
		for j := range r {
			r[j] *= math.Sqrt(v)
		}
	}
	return out
}

// centred returns A = Z_cᵀZ_c + λI and B = Z_cᵀY_c, Z_c and Y_c centred
// on their column means weighted by w, and their rows scaled by √w_i.
func centred(z, y *mat.Dense, w []float64, lambda float64) (*mat.SymDense, *mat.Dense) {
	n, dim := z.Dims()
	_, k := y.Dims()
	var sw float64
	for _, v := range w {
		sw += v
	}
	zc, yc := mat.DenseCopyOf(z), mat.DenseCopyOf(y)
	for _, m := range []*mat.Dense{zc, yc} {
		_, c := m.Dims()
		for j := range c {
			var s float64
			for i := range n {
				s += w[i] * m.At(i, j)
			}
			s /= sw
			for i := range n {
				m.Set(i, j, math.Sqrt(w[i])*(m.At(i, j)-s))
			}
		}
	}
	a := mat.NewSymDense(dim, nil)
	a.SymOuterK(1, zc.T())
	for j := range dim {
		a.SetSym(j, j, a.At(j, j)+lambda)
	}
	b := mat.NewDense(dim, k, nil)
	b.Mul(zc.T(), yc)
	return a, b
}

// normTwo returns the spectral norm of b.
func normTwo(b mat.Matrix) float64 {
	var svd mat.SVD
	if !svd.Factorize(b, mat.SVDNone) {
		return mat.Norm(b, 2)
	}
	return svd.Values(nil)[0]
}
