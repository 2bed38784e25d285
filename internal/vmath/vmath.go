package vmath

import "math"

const (
	twoOverPi = 0.63661977236758134308
	pio2a     = 1.57079632673412561417e+00 // first 33 bits of π/2
	pio2b     = 6.07710050630396597660e-11 // next 33 bits
	pio2c     = 2.02226624879595063154e-21 // π/2 − pio2a − pio2b
	limit     = 1e5
)

// Cephes coefficients, as in the math package.
var (
	sinC = [6]float64{1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
		-1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1}
	cosC = [6]float64{-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
		2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2}
	// For quadrant q = k mod 4: cos x = cq[q]·cos r + sq[q]·sin r.
	cq = [4]float64{1, 0, -1, 0}
	sq = [4]float64{0, -1, 0, 1}
)

// reduce returns r = x − kπ/2 in [−π/4, π/4] and k mod 4.
func reduce(x float64) (float64, int) {
	k := math.Floor(x*twoOverPi + 0.5)
	r := ((x - k*pio2a) - k*pio2b) - k*pio2c
	return r, int(int64(k) & 3)
}

func polys(r float64) (s, c float64) {
	z := r * r
	s = r + r*z*((((((sinC[0]*z)+sinC[1])*z+sinC[2])*z+sinC[3])*z+sinC[4])*z+sinC[5])
	c = 1.0 - 0.5*z + z*z*((((((cosC[0]*z)+cosC[1])*z+cosC[2])*z+cosC[3])*z+cosC[4])*z+cosC[5])
	return
}

// Cos returns cos x.
func Cos(x float64) float64 {
	if !(math.Abs(x) < limit) {
		return math.Cos(x)
	}
	r, q := reduce(x)
	s, c := polys(r)
	return cq[q]*c + sq[q]*s
}

// Sincos returns sin x and cos x.
func Sincos(x float64) (sin, cos float64) {
	if !(math.Abs(x) < limit) {
		return math.Sincos(x)
	}
	r, q := reduce(x)
	s, c := polys(r)
	// sin x = cos(x − π/2): quadrant q+1.
	q1 := (q + 3) & 3
	return cq[q1]*c + sq[q1]*s, cq[q]*c + sq[q]*s
}
