package performer

import (
	"strings"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the memory estimates of the attention studies: the
// largest memory each run holds at once, added up from its configuration
// alone, before anything is allocated, so that a run above a budget
// (kernelkit's --max-memory) is refused at once. The sizes are float64
// products (limits.Estimate), so huge configurations give huge, finite
// totals rather than overflowing. They are upper bounds of the dominant
// allocations within a small factor, not an accounting of every byte.

// exactBlockRows is the number of query rows whose scores exact attention
// (package attention) computes at once, in one buffer per worker.
const exactBlockRows = 64

// featureChunkRows is the number of rows a feature map (package features)
// transforms at once, in scratch space of one chunk per worker.
const featureChunkRows = 64

// Memory estimates the largest memory the run holds at once.
//
// For each sequence length it counts what MSE keeps for every seed at that
// length — Q, K and V (unless given: given inputs are not counted) and the
// exact output, each L×d — plus the larger of the two steps that follow
// each other: exact attention, whose score blocks are 64 rows of L scores
// per worker, and one linear attention (the largest over the variants,
// samplers and feature counts), which holds the projections, the scaled
// queries and keys (L×d each), their features (L×D each, D the map's
// feature dimension: m for the plain maps, about 5m to 18m for the
// FLOP-matched hybrids), the hybrids' intermediate features, the copies of
// queries and keys that the fitted maps (oprf, sderf, aderf) refit to, the
// orthogonal sampler's d×d blocks, the output and its difference from the
// exact one (L×d each). Lengths run one after the other, so the largest
// length's total counts, plus the per-seed MSEs of every row. Memory does
// not validate the configuration (unknown variants count as plain maps).
func (c MSEConfig) Memory() limits.Estimate {
	ls, d := c.inputs()
	samplers := c.Samplers
	if len(samplers) == 0 {
		samplers = []sampler.Sampler{sampler.Default()}
	}
	reg := catalog.Default()
	var best limits.Estimate
	for _, l := range ls {
		var e limits.Estimate
		if c.Q == nil {
			e.Add("Q, K, V of every seed", 3, c.Seeds, l, d)
		}
		e.Add("exact outputs of every seed", c.Seeds, l, d)
		var lin limits.Estimate
		for _, v := range c.Variants {
			for _, s := range samplers {
				for _, m := range c.Features {
					lin = largest(lin, linearMemory(reg, v, sampler.Or(s), l, d, m, 1, c.Causal))
				}
			}
		}
		e.Merge(largest(exactMemory(l, d, 1), lin))
		best = largest(best, e)
	}
	best.Add("per-seed results", len(ls), len(c.Variants), len(samplers), len(c.Features), c.Seeds)
	return best
}

// exactMemory estimates exact attention (attention.Exact) of length l
// and head dimension d run by conc calls at once: each call's output (l×d)
// and score blocks (64 rows of l scores per worker; nested in concurrent
// calls, every call has its workers).
func exactMemory(l, d, conc int) limits.Estimate {
	var e limits.Estimate
	e.Add("exact attention outputs", conc, l, d)
	e.Add("exact attention score blocks", conc, parallel.Workers(l/exactBlockRows+1), exactBlockRows, l)
	return e
}

// linearMemory estimates conc concurrent linear attentions
// (attention.Linear) with the catalog map named variant of m features, on
// l×d queries, keys and values.
func linearMemory(reg *features.Registry, variant string, smp sampler.Sampler, l, d, m, conc int, causal bool) limits.Estimate {
	var e limits.Estimate
	dim, inter, adaptive := featureShape(reg, variant, d, m)
	e.Add("feature projections", m, d)
	if smp.Name() == (sampler.Orthogonal{}).Name() {
		e.Add("orthogonal sampler blocks", 2, d, d)
	}
	e.Add("scaled queries and keys", conc, 2, l, d)
	e.AddBytes("query and key features", 8*float64(conc)*2*float64(max(l, 0))*dim)
	e.AddBytes("intermediate features", 8*float64(conc)*float64(max(l, 0))*inter)
	e.AddBytes("feature scratch", 8*float64(conc)*float64(parallel.Workers(l/featureChunkRows+1))*featureChunkRows*(float64(max(m, 0))+dim))
	if adaptive && !causal {
		e.Add("queries and keys of the refit", conc, 2, l, d)
		e.Add("refitted projections and statistics", m+4*d, d)
	}
	e.AddBytes("K'ᵀV state", 8*float64(conc)*dim*float64(d+1))
	e.Add("linear attention outputs and differences", conc, 2, l, d)
	return e
}

// featureShape returns, for the catalog map named variant with m features
// on inputs of dimension d, the feature dimension D, the intermediate
// features per row that its transform holds besides (the hybrids' base
// and coefficient features) and whether the map is refitted to each call
// (features.Adaptive). The hybrids' dimensions follow from
// hybrid.MatchFLOPs (M base projections, N coefficient projections):
// 4M(1+N) for the angular and Gaussian hybrids, 4M(1+2N) for the bipolar
// one; the plain maps have m features (m+1 for the sin/cos forms of odd
// m). An unknown name counts as a plain map.
func featureShape(reg *features.Registry, variant string, d, m int) (dim, inter float64, adaptive bool) {
	name := strings.TrimSpace(variant)
	if e, err := reg.Lookup(name); err == nil {
		name = e.Name
	}
	plain := float64(max(m, 0) + max(m, 0)%2)
	switch name {
	case "angular", "gaussian", "bipolar":
		o := hybrid.MatchFLOPs(max(d, 1), max(m, 1))
		lam := float64(o.N)
		if name == "bipolar" {
			lam = 2 * float64(o.N)
		}
		return 4 * float64(o.M) * (1 + lam), 4*float64(o.M) + 2*float64(o.N), false
	case "oprf", "sderf", "aderf":
		return plain, 0, true
	}
	return plain, 0, false
}

// largest returns a copy of the estimate of es with the largest total:
// the peak of steps that run one after the other and free what they
// allocate.
func largest(es ...limits.Estimate) limits.Estimate {
	best := 0
	for i, e := range es {
		if e.Bytes() > es[best].Bytes() {
			best = i
		}
	}
	var out limits.Estimate
	if len(es) > 0 {
		out.Merge(es[best])
	}
	return out
}

// Memory estimates the largest memory the run holds at once: at each
// length (one after the other; the largest counts) Q, K and V (L×d each),
// then exact attention (for L ≤ MaxExact: its output and score blocks of
// 64 rows of L scores per worker) or linear attention with TimingFeatures
// positive features on orthogonal projections (scaled queries and keys,
// their L×m features, the output), whichever is larger.
func (c TimingConfig) Memory() limits.Estimate {
	reg := catalog.Default()
	var best limits.Estimate
	for _, l := range c.Lengths {
		var e limits.Estimate
		e.Add("Q, K, V", 3, l, c.Dim)
		lin := linearMemory(reg, "positive", sampler.Orthogonal{}, l, c.Dim, TimingFeatures, 1, c.Causal)
		if l <= c.MaxExact {
			lin = largest(exactMemory(l, c.Dim, 1), lin)
		}
		e.Merge(lin)
		best = largest(best, e)
	}
	return best
}

// deviceScoreCopies and deviceFeatureCopies are the numbers of L×L score
// arrays (scores, their shifted exponentials, the softmax, its product's
// operand) and of L×m feature arrays (projections, exponents and features
// of the queries and of the keys) that an attention graph holds at once per
// head on GoMLX's pure-Go backend, measured (TestDeviceMemoryMeasured).
const (
	deviceScoreCopies   = 4
	deviceFeatureCopies = 6
)

// Memory estimates the largest memory the run holds at once, on the host.
// At each length (one after the other; the largest counts) it counts the
// [B, H, L, d] queries, keys and values, the CPU and device outputs of
// exact attention (kept for the error of FAVOR+) and of the current
// FAVOR+ attention, and the larger of the two attentions' working memory:
// on the CPU, B·H heads run at once on up to GOMAXPROCS goroutines, each
// with the memory of one exact or linear attention (see MSEConfig.Memory);
// on the device, the host copies of the inputs and outputs and, unless the
// device is a CUDA GPU (whose memory is its own), the graph's intermediate
// values, which GoMLX's pure-Go backend keeps in host memory: B·H·L×L
// scores, their exponentials and softmax for exact attention, the B·H·L×m
// projections and features of queries and keys for FAVOR+, in the
// device's float type.
func (c DeviceConfig) Memory() limits.Estimate {
	reg := catalog.Default()
	bh := float64(max(c.Batch, 0)) * float64(max(c.Heads, 0))
	conc := parallel.Workers(int(min(bh, 1<<20)))
	size, hostGraph := 8.0, true
	if c.Device != nil {
		if c.Device.Float32() {
			size = 4
		}
		hostGraph = !strings.Contains(c.Device.Name(), device.CUDA)
	}
	var best limits.Estimate
	for _, l := range c.Lengths {
		ld := bh * float64(max(l, 0)) * float64(max(c.Dim, 0))
		var e limits.Estimate
		e.AddBytes("Q, K, V", 8*3*ld)
		nout := 2.0 // the current attention's CPU and device outputs
		if l <= c.MaxExact {
			nout += 2 // the exact outputs, kept for FAVOR+'s errors
		}
		e.AddBytes("CPU and device outputs", 8*nout*ld)
		var work limits.Estimate
		hostCopies := func(e *limits.Estimate) {
			e.AddBytes("device inputs and outputs (host copies)", size*4*ld)
		}
		if l <= c.MaxExact {
			cpu := exactMemory(l, c.Dim, conc)
			var dev limits.Estimate
			hostCopies(&dev)
			if hostGraph {
				dev.AddBytes("device attention scores", size*deviceScoreCopies*bh*float64(max(l, 0))*float64(max(l, 0)))
			}
			work = largest(cpu, dev)
		}
		for _, m := range c.Features {
			cpu := linearMemory(reg, "positive", sampler.Orthogonal{}, l, c.Dim, m, conc, c.Causal)
			var dev limits.Estimate
			hostCopies(&dev)
			dev.Add("device projection", m, c.Dim)
			if hostGraph {
				dev.AddBytes("device query and key features", size*deviceFeatureCopies*bh*float64(max(l, 0))*float64(max(m, 0)))
			}
			work = largest(work, cpu, dev)
		}
		e.Merge(work)
		best = largest(best, e)
	}
	return best
}
