package limits

import (
	"fmt"
	"sort"
	"strings"
)

// An Estimate adds up the memory a run will allocate, part by part, so
// that a run above a budget is refused before anything is allocated, with
// the parts that make up the total in the message. Parts are rough upper
// bounds of the largest allocations (matrices held at once), not an
// accounting of every byte: the budget is the order of magnitude a user
// sets, e.g. --max-memory 8GiB.
type Estimate struct {
	parts []estimatePart
}

type estimatePart struct {
	what  string
	bytes float64
}

// Add adds a float64 array of the product of dims (what names it, e.g.
// "exact attention scores").
func (e *Estimate) Add(what string, dims ...int) {
	e.AddBytes(what, 8*product(dims))
}

// Add32 adds a float32 array of the product of dims.
func (e *Estimate) Add32(what string, dims ...int) {
	e.AddBytes(what, 4*product(dims))
}

// AddBytes adds a part of b bytes.
func (e *Estimate) AddBytes(what string, b float64) {
	for i := range e.parts {
		if e.parts[i].what == what {
			e.parts[i].bytes += b
			return
		}
	}
	e.parts = append(e.parts, estimatePart{what, b})
}

// Merge adds the parts of o.
func (e *Estimate) Merge(o Estimate) {
	for _, p := range o.parts {
		e.AddBytes(p.what, p.bytes)
	}
}

// Bytes is the total.
func (e Estimate) Bytes() float64 {
	t := 0.0
	for _, p := range e.parts {
		t += p.bytes
	}
	return t
}

// String lists the total and its three largest parts, e.g. "about 8 GiB
// (exact attention scores 6 GiB, inputs 2 GiB)".
func (e Estimate) String() string {
	ps := append([]estimatePart(nil), e.parts...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].bytes > ps[j].bytes })
	var b strings.Builder
	b.WriteString("about " + Bytes(e.Bytes()))
	for i, p := range ps {
		if i == 3 {
			b.WriteString(", …")
			break
		}
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(p.what + " " + Bytes(p.bytes))
	}
	if len(ps) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

// Check returns an error when the estimate exceeds budget bytes; what
// names the budget in the message (e.g. "--max-memory").
func (e Estimate) Check(budget int64, what string) error {
	if e.Bytes() > float64(budget) {
		return fmt.Errorf("the run needs %s, above %s %s", e, what, Bytes(float64(budget)))
	}
	return nil
}

// product is the product of dims as a float64 (no overflow; negative
// dimensions count as zero).
func product(dims []int) float64 {
	p := 1.0
	for _, d := range dims {
		p *= float64(max(d, 0))
	}
	return p
}
