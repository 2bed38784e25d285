package hybrid

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// Large and small diagonal entries for coordinates where one centre is zero
// and the other is not (HRF App. H.2 leaves their values open). Entries are
// also clamped to [diagSmall, diagLarge] in magnitude: a near-zero centre
// coordinate would otherwise give an enormous a_k, and points near (not at)
// the centre would get exponentially large features.
const (
	diagLarge = 10.0
	diagSmall = 0.1
)

func clampMag(v float64) float64 { return math.Min(diagLarge, math.Max(diagSmall, v)) }

// ComplexDiag returns the diagonal complex A of HRF Eq. 85 for a pair of
// query and key centres: A r_q + A⁻¹ r_k = 0 in every coordinate where
// both are non-zero (and |a_k| within the clamp) or both are zero.
func ComplexDiag(rq, rk []float64) []complex128 {
	a := make([]complex128, len(rq))
	for k := range rq {
		qi, kj := rq[k], rk[k]
		switch {
		case qi*kj > 0:
			a[k] = complex(0, clampMag(math.Sqrt(kj/qi)))
		case qi*kj < 0:
			a[k] = complex(clampMag(math.Sqrt(-kj/qi)), 0)
		case qi == 0 && kj == 0:
			a[k] = 1
		case qi == 0:
			a[k] = complex(diagLarge, 0)
		default:
			a[k] = complex(diagSmall, diagSmall)
		}
	}
	return a
}

// RealDiag returns the real diagonal A of HRF Eq. 88 minimising
// ‖A r_q + A⁻¹ r_k‖²: a_k = √|r_k,k / r_q,k|.
func RealDiag(rq, rk []float64) []float64 {
	a := make([]float64, len(rq))
	for k := range rq {
		switch {
		case rq[k] != 0 && rk[k] != 0:
			a[k] = clampMag(math.Sqrt(math.Abs(rk[k] / rq[k])))
		case rq[k] == 0 && rk[k] != 0:
			a[k] = diagLarge
		case rq[k] != 0:
			a[k] = diagSmall
		default:
			a[k] = 1
		}
	}
	return a
}

// ClusterOptions configures a clustered hybrid estimator.
type ClusterOptions struct {
	// M is the number of projections of each per-pair complex exponential
	// estimator.
	M int
	// Complex selects the complex A of Eq. 85; otherwise the real diagonal
	// A of Eq. 88.
	Complex bool
	// Lambda is "zero-one" (cluster indicators, Def. H.2, the default) or
	// "gaussian" (Gaussian-mixture coefficients, Def. H.1).
	Lambda string
	// N and Tau configure Gaussian-mixture coefficients: N positive
	// projections per coefficient and width τ in exp(−‖Ax+A⁻¹y‖²/(2τ²)).
	N   int
	Tau float64
	// Sampler draws the projections (nil: iid Gaussian).
	Sampler sampler.Sampler
	Seed    uint64
}

// Clustered is the zero-one clustered HRF estimator (Def. H.2): the query
// in cluster i and the key in cluster j are estimated by the complex
// exponential estimator of the pair (i, j).
type Clustered struct {
	qc, kc *mat.Dense // centres
	ces    [][]*ComplexExp
	d, blk int
}

// NewClustered builds a clustered hybrid from query centres qc (nq×d) and
// key centres kc (nk×d). With Lambda "gaussian" it returns an *HRF.
func NewClustered(qc, kc *mat.Dense, o ClusterOptions) (features.Pair, error) {
	nq, d := qc.Dims()
	nk, dk := kc.Dims()
	if d != dk {
		return nil, fmt.Errorf("hybrid: query centres have %d columns, key centres %d", d, dk)
	}
	if o.M <= 0 {
		return nil, fmt.Errorf("hybrid: number of projections must be positive, got %d", o.M)
	}
	smp := sampler.Or(o.Sampler)
	ces := make([][]*ComplexExp, nq)
	for i := range ces {
		ces[i] = make([]*ComplexExp, nk)
		for j := range ces[i] {
			w, err := smp.Sample(o.M, d, o.Seed+uint64(i*nk+j))
			if err != nil {
				return nil, err
			}
			var a []complex128
			if o.Complex {
				a = ComplexDiag(qc.RawRowView(i), kc.RawRowView(j))
			} else {
				for _, v := range RealDiag(qc.RawRowView(i), kc.RawRowView(j)) {
					a = append(a, complex(v, 0))
				}
			}
			if ces[i][j], err = NewComplexExpDiag(a, w); err != nil {
				return nil, err
			}
		}
	}
	switch o.Lambda {
	case "", "zero-one":
		return &Clustered{qc: qc, kc: kc, ces: ces, d: d, blk: 2 * o.M}, nil
	case "gaussian":
	default:
		return nil, fmt.Errorf("hybrid: unknown clustered λ %q (want zero-one or gaussian)", o.Lambda)
	}
	if o.N <= 0 || !(o.Tau > 0) {
		return nil, fmt.Errorf("hybrid: Gaussian-mixture λs need N > 0 and τ > 0, got %d and %v", o.N, o.Tau)
	}
	var bases []features.Pair
	var lambdas []Lambda
	for i := 0; i < nq; i++ {
		for j := 0; j < nk; j++ {
			bases = append(bases, ces[i][j])
			ad := RealDiag(qc.RawRowView(i), kc.RawRowView(j))
			qm := mat.NewDense(d, d, nil)
			km := mat.NewDense(d, d, nil)
			for k, v := range ad {
				qm.Set(k, k, v/o.Tau)
				km.Set(k, k, -1/(v*o.Tau))
			}
			w, err := smp.Sample(o.N, d, o.Seed+1000003+uint64(i*nk+j))
			if err != nil {
				return nil, err
			}
			g, err := mapFromW("rbf", "positive", 0.5, w, o.Seed, smp)
			if err != nil {
				return nil, err
			}
			lambdas = append(lambdas, Lambda{P: transformed{features.Symmetric(g), qm, km}})
		}
	}
	// The default base estimator takes the remaining weight 1 − Σλ̂.
	w, err := smp.Sample(o.M, d, o.Seed+2000003)
	if err != nil {
		return nil, err
	}
	def, err := mapFromW("softmax", "trig", 0, w, o.Seed, smp)
	if err != nil {
		return nil, err
	}
	return New(append(bases, features.Symmetric(def)), lambdas)
}

// transformed applies linear maps to queries (qm) and keys (km) before
// the inner pair; a nil map is the identity.
type transformed struct {
	features.Pair
	qm, km *mat.Dense
}

func (t transformed) Query(dst, x *mat.Dense) error {
	if t.qm == nil {
		return t.Pair.Query(dst, x)
	}
	var u mat.Dense
	u.Mul(x, t.qm.T())
	return t.Pair.Query(dst, &u)
}

func (t transformed) Key(dst, y *mat.Dense) error {
	if t.km == nil {
		return t.Pair.Key(dst, y)
	}
	var u mat.Dense
	u.Mul(y, t.km.T())
	return t.Pair.Key(dst, &u)
}

// WithProjectors runs the inner pair on projectors made by np; the linear
// maps before it stay exact.
func (t transformed) WithProjectors(np features.NewProjector) (features.Pair, error) {
	p, err := features.PairWithProjectors(t.Pair, np)
	if err != nil {
		return nil, err
	}
	return transformed{p, t.qm, t.km}, nil
}

// Dim returns nq·nk·2M.
func (c *Clustered) Dim() int { nq, _ := c.qc.Dims(); nk, _ := c.kc.Dims(); return nq * nk * c.blk }

// InputDim returns d.
func (c *Clustered) InputDim() int { return c.d }

// Query writes, for x in query cluster i, Ψ_{A_ij}(x) into block (i, j)
// for every j, zeros elsewhere.
func (c *Clustered) Query(dst, x *mat.Dense) error { return c.side(dst, x, true) }

// Key writes, for y in key cluster j, Ψ_{A_ij⁻¹}(y) into block (i, j) for
// every i, zeros elsewhere.
func (c *Clustered) Key(dst, y *mat.Dense) error { return c.side(dst, y, false) }

func (c *Clustered) side(dst, x *mat.Dense, query bool) error {
	n, d := x.Dims()
	if d != c.d {
		return fmt.Errorf("hybrid: input has %d columns, estimator expects %d", d, c.d)
	}
	if r, cc := dst.Dims(); r != n || cc != c.Dim() {
		return errors.New("hybrid: destination has the wrong shape")
	}
	nq, _ := c.qc.Dims()
	nk, _ := c.kc.Dims()
	dst.Zero()
	centres := c.kc
	if query {
		centres = c.qc
	}
	// Group the rows by nearest centre and transform each group at once.
	nc, _ := centres.Dims()
	groups := make([][]int, nc)
	for r := 0; r < n; r++ {
		a := cluster.Nearest(centres, x.RawRowView(r))
		groups[a] = append(groups[a], r)
	}
	for a, rows := range groups {
		if len(rows) == 0 {
			continue
		}
		xa := mat.NewDense(len(rows), d, nil)
		for k, r := range rows {
			copy(xa.RawRowView(k), x.RawRowView(r))
		}
		buf := mat.NewDense(len(rows), c.blk, nil)
		others := nk
		if !query {
			others = nq
		}
		for o := 0; o < others; o++ {
			i, j := a, o
			var err error
			if query {
				err = c.ces[i][j].Query(buf, xa)
			} else {
				i, j = o, a
				err = c.ces[i][j].Key(buf, xa)
			}
			if err != nil {
				return err
			}
			for k, r := range rows {
				copy(dst.RawRowView(r)[(i*nk+j)*c.blk:], buf.RawRowView(k))
			}
		}
	}
	return nil
}
