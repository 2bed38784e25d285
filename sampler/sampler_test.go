package sampler

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func all() []Sampler {
	return []Sampler{Gaussian{}, Orthogonal{}, Structured{}, Truncated{K: 3}, Halton{}}
}

func TestDeterministicAndShape(t *testing.T) {
	for _, s := range all() {
		a, err := s.Sample(37, 11, 42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.Sample(37, 11, 42)
		c, _ := s.Sample(37, 11, 43)
		if r, col := a.Dims(); r != 37 || col != 11 {
			t.Errorf("%s: shape %dx%d", s.Name(), r, col)
		}
		if !mat.Equal(a, b) {
			t.Errorf("%s: same seed, different matrices", s.Name())
		}
		if mat.Equal(a, c) {
			t.Errorf("%s: different seeds, same matrix", s.Name())
		}
	}
}

// TestMarginalMoments: the entries of every sampler have mean 0 and
// variance 1 (TruncatedVariance(3) for the truncated one), within 4
// standard errors over 200000 entries.
func TestMarginalMoments(t *testing.T) {
	const m, d = 20000, 10
	for _, s := range all() {
		w, err := s.Sample(m, d, 7)
		if err != nil {
			t.Fatal(err)
		}
		data := w.RawMatrix().Data
		mean, sd := stat.MeanStdDev(data, nil)
		wantVar := 1.0
		if _, ok := s.(Truncated); ok {
			wantVar = TruncatedVariance(3)
		}
		n := float64(len(data))
		if math.Abs(mean) > 4*math.Sqrt(wantVar/n) {
			t.Errorf("%s: mean %.4g", s.Name(), mean)
		}
		// SORF entries are not Gaussian (Hadamard sums of signs), so use the
		// fourth moment of the data for the variance's standard error.
		var m4 float64
		for _, v := range data {
			m4 += math.Pow(v-mean, 4)
		}
		m4 /= n
		seVar := math.Sqrt((m4 - sd*sd*sd*sd) / n)
		if math.Abs(sd*sd-wantVar) > 4*seVar {
			t.Errorf("%s: variance %.4g, want %.4g (±%.2g)", s.Name(), sd*sd, wantVar, seVar)
		}
	}
}

// TestOrthogonality: rows within an ORF or SORF block are orthogonal.
func TestOrthogonality(t *testing.T) {
	for _, c := range []struct {
		s     Sampler
		d     int
		block int
	}{{Orthogonal{}, 12, 12}, {Structured{}, 16, 16}} {
		w, _ := c.s.Sample(2*c.block, c.d, 3)
		for b := 0; b < 2; b++ {
			for i := 0; i < c.block; i++ {
				for j := i + 1; j < c.block; j++ {
					ri := w.RawRowView(b*c.block + i)
					rj := w.RawRowView(b*c.block + j)
					var ip float64
					for k := range ri {
						ip += ri[k] * rj[k]
					}
					if math.Abs(ip) > 1e-9 {
						t.Fatalf("%s: rows %d and %d of block %d have inner product %g", c.s.Name(), i, j, b, ip)
					}
				}
			}
		}
	}
}

func TestTruncatedBound(t *testing.T) {
	w, _ := Truncated{K: 1.5}.Sample(1000, 5, 1)
	for _, v := range w.RawMatrix().Data {
		if math.Abs(v) > 1.5 {
			t.Fatalf("entry %v beyond truncation", v)
		}
	}
}

func TestHaltonLowDiscrepancy(t *testing.T) {
	// The empirical CDF of Halton points at the median is much closer to
	// 1/2 than for iid points: count negatives in the first column.
	w, _ := Halton{}.Sample(1024, 3, 5)
	neg := 0
	for i := 0; i < 1024; i++ {
		if w.At(i, 0) < 0 {
			neg++
		}
	}
	if math.Abs(float64(neg)-512) > 2 {
		t.Errorf("Halton: %d of 1024 points below the median; a (0,1)-sequence in base 2 gives 512±1", neg)
	}
}

func TestBadParameters(t *testing.T) {
	for _, s := range all() {
		if _, err := s.Sample(0, 3, 1); err == nil {
			t.Errorf("%s: zero rows accepted", s.Name())
		}
		if _, err := s.Sample(3, -1, 1); err == nil {
			t.Errorf("%s: negative dimension accepted", s.Name())
		}
	}
	if _, err := (Truncated{K: -1}).Sample(2, 2, 1); err == nil {
		t.Error("negative truncation accepted")
	}
	if _, err := ByName("sobol"); err == nil {
		t.Error("unknown sampler name accepted")
	}
}

// TestHugeSizes: sizes from users that overflow int or exceed the memory
// limit give an error naming the problem before anything is allocated
// (they panicked or aborted out of memory before), for every sampler.
func TestHugeSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		m, d int
		want string
	}{
		{"1e9 features", 1_000_000_000, 16, "would need"},
		{"2^62 features", 1 << 62, 16, "overflows"},
		{"max int features", math.MaxInt, 2, "overflows"},
		{"2^62 dimension", 4, 1 << 62, "dimension"},
		{"dimension above MaxDim", 1, 1<<24 + 1, "dimension"},
		{"2^31×2^31", 1 << 31, 1 << 31, "dimension"},
		{"2^20×2^11", 1 << 20, 1 << 11, "would need"},
		{"negative rows", -5, 3, "positive"},
	} {
		for _, s := range all() {
			w, err := s.Sample(c.m, c.d, 1)
			if err == nil {
				r, col := w.Dims()
				t.Errorf("%s, %s: accepted, got %d×%d", c.name, s.Name(), r, col)
				continue
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sampler: ") {
				t.Errorf("%s, %s: error %q, want one starting \"sampler: \" and mentioning %q", c.name, s.Name(), err, c.want)
			}
		}
	}
	// ORF also needs a d×d block: 2^16 columns pass the dimension limit
	// but not the block's memory limit, even for one row.
	if _, err := (Orthogonal{}).Sample(1, 1<<16, 1); err == nil || !strings.Contains(err.Error(), "orthogonal block") {
		t.Errorf("ORF with d = 2^16: error %v, want the block's memory limit", err)
	}
}

// TestHaarQMatchesLAPACK: haarQ is the QR factor with a positive diagonal
// of R, which is unique for a non-singular matrix: it equals gonum's
// mat.QR factor after the same sign correction to rounding, and is
// orthogonal to rounding. The matrices are Gaussian (full rank; a
// structured test matrix such as sin(3i+d) has rank 2 and no unique Q).
// Tolerances: Q of a matrix of condition κ moves by about κ·ε under
// backward-stable rounding (Higham, Accuracy and Stability, §19.9), so two
// QR codes agree to c·d·κ·ε; Householder Q is orthogonal to c·d·ε
// (Higham, Thm. 19.4). c = 10.
func TestHaarQMatchesLAPACK(t *testing.T) {
	const eps = 0x1p-52
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 7, 33} {
		g := make([]float64, d*d)
		for i := range g {
			g[i] = rnd.NormFloat64()
		}
		kappa := mat.Cond(mat.NewDense(d, d, append([]float64(nil), g...)), 2)
		var qr mat.QR
		qr.Factorize(mat.NewDense(d, d, append([]float64(nil), g...)))
		var want, r mat.Dense
		qr.QTo(&want)
		qr.RTo(&r)
		for j := 0; j < d; j++ {
			if r.At(j, j) < 0 {
				for i := 0; i < d; i++ {
					want.Set(i, j, -want.At(i, j))
				}
			}
		}
		q := make([]float64, d*d)
		haarQ(g, q, d, make([]float64, 3*d))
		got := mat.NewDense(d, d, q)
		if tol := 10 * float64(d) * kappa * eps; !mat.EqualApprox(got, &want, tol) {
			t.Errorf("d=%d (κ = %.3g): Householder Q differs from mat.QR's by more than %.2g:\n%v\n%v", d, kappa, tol, mat.Formatted(got), mat.Formatted(&want))
		}
		var qtq mat.Dense
		qtq.Mul(got.T(), got)
		tol := 10 * float64(d) * eps
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(qtq.At(i, j)-want) > tol {
					t.Fatalf("d=%d: (QᵀQ)[%d][%d] = %v, want %v to %.2g", d, i, j, qtq.At(i, j), want, tol)
				}
			}
		}
	}
}

// BenchmarkOrthogonal times one d×d ORF block (its Householder QR).
func BenchmarkOrthogonal(b *testing.B) {
	for _, d := range []int{64, 256, 784} {
		b.Run(strconv.Itoa(d), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := (Orthogonal{}).Sample(d, d, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStructuredWide: SORF costs O(n log n) per row drawn, not per input
// column, so a few rows of a wide input (d = 2²⁰; the column-by-column
// construction took O(d·n log n), hours here) are quick, and they are still
// mutually orthogonal.
func TestStructuredWide(t *testing.T) {
	const m, d = 3, 1 << 20
	w, err := Structured{}.Sample(m, d, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			ri, rj := w.RawRowView(i), w.RawRowView(j)
			if c := floats.Dot(ri, rj) / (floats.Norm(ri, 2) * floats.Norm(rj, 2)); math.Abs(c) > 1e-12 {
				t.Errorf("rows %d and %d: cosine %g", i, j, c)
			}
		}
	}
}
