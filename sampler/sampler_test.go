package sampler

import (
	"math"
	"testing"

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
