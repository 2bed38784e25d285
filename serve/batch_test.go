package serve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// failMap fails on any batch holding a row whose first value is poison.
type failMap struct{ features.Transformer }

const poison = -12345

func (f failMap) Transform(dst, x *mat.Dense) error {
	n, _ := x.Dims()
	for i := range n {
		if x.At(i, 0) == poison {
			return errors.New("poisoned row")
		}
	}
	return f.Transformer.Transform(dst, x)
}

// TestComputeFallback: a batch whose feature pass fails is computed
// request by request, so only the request with the bad row fails and the
// others get exactly their lone answers.
func TestComputeFallback(t *testing.T) {
	a, _, _, rows := models(t)
	m := *a
	m.Scaler = nil
	m.Map = failMap{a.Map}
	s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: &m}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := s.models["m"]
	sn := e.cur.Load()
	bad := rowsOf(rows, 0, 2)
	bad.Set(1, 0, poison)
	jobs := []*job{
		{ctx: context.Background(), snap: sn, x: rowsOf(rows, 0, 3), done: make(chan jobResult, 1)},
		{ctx: context.Background(), snap: sn, x: bad, done: make(chan jobResult, 1)},
		{ctx: context.Background(), snap: sn, x: rowsOf(rows, 3, 4), transform: true, done: make(chan jobResult, 1)},
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	gone := &job{ctx: canceled, snap: sn, x: rowsOf(rows, 0, 1), done: make(chan jobResult, 1)}
	s.process(e, append(jobs, gone))
	r0, r1, r2, r3 := <-jobs[0].done, <-jobs[1].done, <-jobs[2].done, <-gone.done
	want0, err := m.Predict(rowsOf(rows, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	want2, err := m.Features(rowsOf(rows, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	if r0.err != nil || !mat.Equal(r0.out, want0) {
		t.Errorf("good job: %v", r0.err)
	}
	if r1.err == nil || r1.err.status != 400 || r1.err.kind != kindOutOfRange || !strings.Contains(r1.err.msg, "poisoned") {
		t.Errorf("bad job: %+v", r1.err)
	}
	if r2.err != nil || !mat.Equal(r2.out, want2) {
		t.Errorf("transform job: %v", r2.err)
	}
	if r3.err == nil || r3.err.kind != kindUnavailable {
		t.Errorf("canceled job: %+v", r3.err)
	}
	// The first pass over all 6 rows failed, then 3 lone passes.
	if got := metric(t, s, "kernelkit_serve_batch_rows", map[string]string{"model": "m"}); got != 4 {
		t.Errorf("%v feature passes, want 4", got)
	}
}

// panicMap panics in Transform.
type panicMap struct{ features.Transformer }

func (panicMap) Transform(dst, x *mat.Dense) error { panic("boom") }

// TestComputePanic: a panicking feature pass fails its requests with 500,
// not the server.
func TestComputePanic(t *testing.T) {
	a, _, _, rows := models(t)
	m := model.Model(*a)
	m.Map = panicMap{a.Map}
	s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: &m}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := s.models["m"]
	j := &job{ctx: context.Background(), snap: e.cur.Load(), x: rowsOf(rows, 0, 2), done: make(chan jobResult, 1)}
	r := s.run(e, j)
	if r.err == nil || r.err.status != 500 || r.err.kind != kindInternal {
		t.Errorf("panicking pass: %+v", r.err)
	}
}
