package native

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/prf"
)

// The performer's feature families (arch.FeatureMaps, nn.FamilyAttention):
// favor+ and simrf share FAVOR+'s features (favorFromProjection; simrf differs
// in the draw of Omega only); oprf and sderf fit their parameters to each
// sequence's and head's scaled queries and keys in the forward pass and
// evaluate
//
//	φ(x) = exp(W_eff x + off − ‖x‖²/2 − shift),
//
// with W_eff (m×d_h) and off (m) saved in the head's state after its
// features; the backward pass holds them constant (nn's StopGradient), so
// it is favorFeaturesBackward with W_eff in place of Omega.

// familyStateLen returns the state elements per head that the feature
// family adds after FAVOR+'s: W_eff and off for oprf and sderf, none
// otherwise.
func (a *Attention[T]) familyStateLen() int {
	if !arch.FittedFamily(a.family) {
		return 0
	}
	return a.m*a.dh + a.m
}

// familyParts returns head z's saved fitted projection W_eff (m×d_h) and
// offsets off (m).
func (a *Attention[T]) familyParts(z int) (weff, off []T) {
	L, m, dh := a.l, a.m, a.dh
	base := 2*L*m + L*(dh+1)
	st := a.headState(z)
	return st[base : base+m*dh], st[base+m*dh : base+m*dh+m]
}

// headFeatures sets head z's query features qf and key features kf (L×m)
// of the scaled queries xq and keys xk (L×d_h): FAVOR+'s for favor+ and
// simrf, else those of the family fitted to xq and xk (saved for the
// backward pass).
func (a *Attention[T]) headFeatures(z int, qf, kf, xq, xk []T) {
	L, dh, m := a.l, a.dh, a.m
	if !arch.FittedFamily(a.family) {
		a.projectFeatures(qf, xq, L, dh, m)
		favorFromProjection(qf, xq, L, dh, m, true)
		a.projectFeatures(kf, xk, L, dh, m)
		favorFromProjection(kf, xk, L, dh, m, false)
		return
	}
	weff, off := a.familyParts(z)
	fitFamily(a.family, weff, off, xq, xk, a.Omega.Value, a.headMask(z), L, dh, m)
	fittedFeatures(qf, xq, weff, off, L, dh, m, true)
	fittedFeatures(kf, xk, weff, off, L, dh, m, false)
}

// featureProjection returns the projection head z's features
// exponentiate: Omega, or the fitted W_eff of oprf and sderf.
func (a *Attention[T]) featureProjection(z int) []T {
	if !arch.FittedFamily(a.family) {
		return a.Omega.Value
	}
	weff, _ := a.familyParts(z)
	return weff
}

// fitFamily sets weff (m×d) and off (m) to the fitted parameters of the
// oprf or sderf features (nn.FitFeatureFamily) for the scaled queries xq
// and keys xk (L×d) of one sequence and head, weighted by the key mask
// (nil: all rows), with the draw omega (m×d). The statistics and the fit
// are computed in float64 by package prf (Stats, FitOPRF, FitSDERF: the
// eigendecomposition of the pair moment by LAPACK's symmetric solver);
// the sderf parameters are the matrix functions 𝒜 = Q·diag(a)·Qᵀ and ℬ =
// Q·diag(√(1−4a))·Qᵀ, W_eff = ω·ℬ, off_j = ω_jᵀ𝒜ω_j + ¼Σ_l log(1−4a_l) −
// ½·log m. If the eigendecomposition fails (non-finite inputs, whose
// features are not finite anyway) the parameters are FAVOR+'s.
func fitFamily[T Float](family string, weff, off, xq, xk, omega, mask []T, L, d, m int) {
	var n float64
	for l := 0; l < L; l++ {
		n += weight(mask, l)
	}
	n = math.Max(n, 1)
	st := &prf.Stats{D: d, MeanX: make([]float64, d), MeanY: make([]float64, d)}
	moment := func(mean []float64, x []T) *mat.SymDense {
		mm := make([]float64, d*d)
		for l := 0; l < L; l++ {
			w := weight(mask, l) / n
			if w == 0 {
				continue
			}
			row := x[l*d : (l+1)*d]
			for i, vi := range row {
				mean[i] += w * float64(vi)
				for j := i; j < d; j++ {
					mm[i*d+j] += w * float64(vi) * float64(row[j])
				}
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				mm[i*d+j] = mm[j*d+i]
			}
		}
		return mat.NewSymDense(d, mm)
	}
	st.MomentX = moment(st.MeanX, xq)
	st.MomentY = moment(st.MeanY, xk)
	a := make([]float64, d)
	var basis *mat.Dense // Qᵀ; nil: the identity
	switch family {
	case arch.FeatureOPRF:
		av := prf.FitOPRF(st)
		for i := range a {
			a[i] = av
		}
	case arch.FeatureSDERF:
		if fa, b, err := prf.FitSDERF(st); err == nil {
			a, basis = fa, b
		}
	default:
		panic("native: feature family " + family + " has no fitted parameters")
	}
	var logD float64
	sq := make([]float64, d) // √(1−4a_l)
	for l, al := range a {
		logD += 0.25 * math.Log1p(-4*al)
		sq[l] = math.Sqrt(1 - 4*al)
	}
	logD -= 0.5 * math.Log(float64(m))
	var q []float64 // basis = Qᵀ, row-major: Q_il = q[l*d+i]
	if basis != nil {
		q = basis.RawMatrix().Data
	}
	wq := make([]float64, d) // row j of ω·Q, then scaled by √(1−4a)
	for j := 0; j < m; j++ {
		om := omega[j*d : (j+1)*d]
		c := logD
		for l := range wq {
			v := float64(om[l])
			if q != nil {
				v = 0
				for i, o := range om {
					v += float64(o) * q[l*d+i]
				}
			}
			c += a[l] * v * v
			wq[l] = v * sq[l]
		}
		off[j] = T(c)
		row := weff[j*d : (j+1)*d]
		if q == nil {
			for i, v := range wq {
				row[i] = T(v)
			}
			continue
		}
		acc := make([]float64, d)
		for l, v := range wq {
			for i, ql := range q[l*d : (l+1)*d] {
				acc[i] += v * ql
			}
		}
		for i, v := range acc {
			row[i] = T(v)
		}
	}
}

// weight returns the mask entry of row l (1 without a mask).
func weight[T Float](mask []T, l int) float64 {
	if mask == nil {
		return 1
	}
	return float64(mask[l])
}

// fittedFeatures sets f (L×m) to exp(u − shift) for the exponents u =
// x·W_effᵀ + off − ‖x‖²/2 of the rows of x (L×d), shift the row's largest
// exponent (rowwise, queries) or the largest over all rows (keys), as nn's
// fittedFeatures.
func fittedFeatures[T Float](f, x, weff, off []T, L, d, m int, rowwise bool) {
	gemm(false, true, L, m, d, 1, x, d, weff, d, 0, f, m)
	for l := 0; l < L; l++ {
		var sq float64
		for _, v := range x[l*d : (l+1)*d] {
			sq += float64(v) * float64(v)
		}
		h := T(0.5 * sq)
		row := f[l*m : (l+1)*m]
		for i := range row {
			row[i] = row[i] + off[i] - h
		}
	}
	var shift T
	if !rowwise {
		shift = sliceMax(f[:L*m])
	}
	for l := 0; l < L; l++ {
		row := f[l*m : (l+1)*m]
		sh := shift
		if rowwise {
			sh = sliceMax(row)
		}
		for i := range row {
			row[i] -= sh
		}
		expSlice(row)
	}
}
