#!/usr/bin/env python3
"""PyTorch (CPU) peer of `kernelkit attention --timing`: exact softmax attention and FAVOR+
linear attention (positive features, m = 256 orthogonal projections, as in the Performer
and performer-pytorch) on random N(0,1) Q, K, V of one head, float64, on this machine's
cores. Causal linear attention is the chunked form (masked product inside a chunk of 128,
running state across chunks), the memory-bounded formulation of performer-pytorch's
causal_linear_attention_noncuda. Prints one JSON object per length with the minimum of
REPEATS timings (after one untimed warm-up) and, at the lengths with exact attention, the
linear output's MSE and relative Frobenius error against exact (compare with the MSE of
`kernelkit attention --features 256 --variants positive`: both compute the same estimator). Needs Debian's python3-torch; run by scripts/compare_attention.sh.

Usage: /usr/bin/python3 scripts/torch_attention.py --lengths 1024,4096 --d 16 [--causal]
"""
import argparse, json, math, time
import torch

def exact(q, k, v, causal):
    s = (q @ k.T) / math.sqrt(q.shape[1])
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v

def orf(m, d, g):
    blocks = []
    for _ in range((m + d - 1) // d):
        qm, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
        blocks.append(qm.T)
    w = torch.cat(blocks)[:m]
    return w * torch.randn(m, d, generator=g, dtype=torch.float64).norm(dim=1, keepdim=True)

def phi(x, w, key):
    xs = x * x.shape[1] ** -0.25
    a = xs @ w.T - (xs * xs).sum(1, keepdim=True) / 2
    a = a - (a.max() if key else a.max(dim=1, keepdim=True).values)
    return torch.exp(a) / math.sqrt(w.shape[0])

def linear(q, k, v, w, causal, chunk=128):
    qp, kp = phi(q, w, False), phi(k, w, True)
    if not causal:
        return (qp @ (kp.T @ v)) / (qp @ kp.sum(0)).unsqueeze(1)
    L, m, dv = q.shape[0], w.shape[0], v.shape[1]
    out = torch.empty(L, dv, dtype=q.dtype)
    state = torch.zeros(m, dv, dtype=q.dtype)
    ksum = torch.zeros(m, dtype=q.dtype)
    for lo in range(0, L, chunk):
        hi = min(lo + chunk, L)
        qc, kc, vc = qp[lo:hi], kp[lo:hi], v[lo:hi]
        a = (qc @ kc.T).tril()
        num = qc @ state + a @ vc
        den = qc @ ksum + a.sum(1)
        out[lo:hi] = num / den.unsqueeze(1)
        state += kc.T @ vc
        ksum += kc.sum(0)
    return out

def timed(f, repeats):
    f()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter(); f(); best = min(best, time.perf_counter() - t0)
    return best

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="1024,4096,16384")
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--max-exact", type=int, default=16384)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    for L in [int(s) for s in a.lengths.split(",")]:
        g = torch.Generator().manual_seed(L)
        q, k, v = (torch.randn(L, a.d, generator=g, dtype=torch.float64) for _ in range(3))
        w = orf(a.features, a.d, g)
        row = {"L": L, "d": a.d, "features": a.features, "causal": a.causal,
               "torch": torch.__version__, "threads": torch.get_num_threads()}
        with torch.no_grad():
            row["linear_seconds"] = timed(lambda: linear(q, k, v, w, a.causal), a.repeats)
            if L <= a.max_exact:
                row["exact_seconds"] = timed(lambda: exact(q, k, v, a.causal), a.repeats)
                e = exact(q, k, v, a.causal)
                diff = linear(q, k, v, w, a.causal) - e
                row["linear_mse"] = float((diff * diff).mean())
                row["linear_rel_error"] = float(diff.norm() / e.norm())
        print(json.dumps(row), flush=True)

if __name__ == "__main__":
    main()
