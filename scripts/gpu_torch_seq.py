#!/usr/bin/env python3
"""PyTorch reference for kernelkit's sequence benchmarks on the GPU (issue 18).

Times, on CUDA in float32 with TF32 off, the cases of device/bench_seq_test.go
(BenchmarkSeqAttention, BenchmarkSeqToeplitz) and prints one line per case in the
format of `go test -bench`, device "torch-f32", so that the lines of both can be put
in one table:

  BenchmarkSeqAttention/torch-f32/linear/B8H8L4096D64m256   200   3081234 ns/op   87.12 GFLOP/s

Rates are the nominal ones of the Go benchmarks: attention FLOPs 4*BH*L*L*D (softmax,
causal or not) and 4*BH*L*m*(D+Dv) (linear, causal or not); Toeplitz mixing GB/s of the
input read and the output written once. Each case runs after a warm-up, timed between
torch.cuda.synchronize() calls, repeated until --min-time seconds have passed.

  softmax, softmax-causal  torch.nn.functional.scaled_dot_product_attention (float32:
                           PyTorch's memory-efficient kernel); with --half also
                           softmax-f16 / softmax-causal-f16 (FlashAttention in float16),
                           for the length at which causal linear attention beats flash.
  linear                   FAVOR+ positive features (projection given, row-max
                           stabilised as in nn.FavorFeatures) and einsum products.
  linear-causal            the same features, chunked: masked C x C products inside a
                           chunk, torch.cumsum over chunk states across chunks (C chosen
                           as device.Linear's default; --chunk overrides).
  tno                      torch.fft.rfft / irfft of the circulant embedding (2n).
  ski                      dense W (n x r) products, the r x r Toeplitz products, and a
                           depthwise conv1d for the sparse filter (width 32).
  fd-causal                Hilbert transform by irfft -> causal window -> rfft, then the
                           rfft product; fd-bidirectional: the rfft product.

Usage: python3 scripts/gpu_torch_seq.py [--cases large|small|all] [--half] [--ops ...]
       python3 scripts/gpu_torch_seq.py --selftest   (CPU, float64: checks the forms)
"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

# The cases of device/bench_seq_test.go: (B, H, L, D, m) and (B, n, d).
ATTN_SMALL = [(1, 2, 256, 32, 64)]
ATTN_LARGE = [
    (8, 8, 4096, 64, 256),
    (1, 8, 4096, 64, 256), (4, 8, 4096, 64, 256),
    (1, 8, 16384, 64, 256), (4, 8, 16384, 64, 256),
    (1, 8, 65536, 64, 256), (4, 8, 65536, 64, 256),
]
TOEP_SMALL = [(2, 256, 32)]
TOEP_LARGE = [(8, 4096, 512), (8, 8192, 512)]
SKI_R, SKI_WIDTH = 64, 32
ATTN_OPS = ["softmax", "softmax-causal", "linear", "linear-causal"]
TOEP_OPS = ["tno", "ski", "fd-causal", "fd-bidirectional"]


def seq_chunk(l, m, dv):
    """device.seqChunk: the causal chunk size for length l."""
    if l <= 64:
        return l
    c = (2 * l * m * dv / (m + dv)) ** (1 / 3)
    p = 1 << int(round(math.log2(c)))
    return min(max(p, 32), 512, l)


def favor(x, omega, rowwise):
    """nn.FavorFeatures on x (..., L, d) already scaled by d^(-1/4)."""
    proj = torch.einsum("bhld,md->bhlm", x, omega)
    sq = 0.5 * (x * x).sum(-1, keepdim=True)
    if rowwise:
        shift = proj.amax(-1, keepdim=True)
    else:
        shift = proj.amax(dim=(-1, -2), keepdim=True)
    return torch.exp(proj - sq - shift) / math.sqrt(omega.shape[0])


def linear_attention(q, k, v, omega, causal, chunk=0):
    d = q.shape[-1]
    sc = d ** -0.25
    qf, kf = favor(q * sc, omega, True), favor(k * sc, omega, False)
    if not causal:
        kv = torch.einsum("bhlm,bhlv->bhmv", kf, v)
        num = torch.einsum("bhlm,bhmv->bhlv", qf, kv)
        den = torch.einsum("bhlm,bhm->bhl", qf, kf.sum(2))
        return num / den.unsqueeze(-1)
    b, h, l, m = qf.shape
    dv = v.shape[-1]
    c = chunk or seq_chunk(l, m, dv)
    pad = (c - l % c) % c
    if pad:
        qf = F.pad(qf, (0, 0, 0, pad))
        kf = F.pad(kf, (0, 0, 0, pad))
        v = F.pad(v, (0, 0, 0, pad))
    nc = (l + pad) // c
    qc = qf.reshape(b * h, nc, c, m)
    kc = kf.reshape(b * h, nc, c, m)
    vc = v.reshape(b * h, nc, c, dv)
    s = torch.einsum("znci,znsi->zncs", qc, kc).tril()
    num = torch.einsum("zncs,znsv->zncv", s, vc)
    den = s.sum(-1)
    if nc > 1:
        st = torch.einsum("znsi,znsv->zniv", kc, vc)
        zs = kc.sum(2)
        pst = torch.cumsum(st, 1) - st  # exclusive prefix over chunks
        pzs = torch.cumsum(zs, 1) - zs
        num = num + torch.einsum("znci,zniv->zncv", qc, pst)
        den = den + torch.einsum("znci,zni->znc", qc, pzs)
    out = (num / den.unsqueeze(-1)).reshape(b, h, l + pad, dv)
    return out[:, :, :l]


def softmax_attention(q, k, v, causal):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # torch < 2.0 (self-test only)
    if causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def circulant_spectrum(coef, n):
    """rFFT (length 2n) of the circulant's first column per channel; coef (2n-1, d)."""
    col = torch.cat([coef[n - 1:], torch.zeros_like(coef[:1]), coef[:n - 1]], 0)
    return torch.fft.rfft(col, dim=0)  # (n+1, d)


def circular_apply(x, spec):
    """irFFT(spec * rFFT([x, 0]))[:n] along the sequence axis of x (B, n, d)."""
    n = x.shape[1]
    y = torch.fft.irfft(torch.fft.rfft(x, n=2 * n, dim=1) * spec.unsqueeze(0), n=2 * n, dim=1)
    return y[:, :n]


def tno(x, coef):
    return circular_apply(x, circulant_spectrum(coef, x.shape[1]))


def fd_causal(x, khat):
    n = x.shape[1]
    h = torch.fft.irfft(khat.to(torch.complex64 if khat.dtype == torch.float32 else torch.complex128), n=2 * n, dim=0)
    win = torch.zeros(2 * n, 1, dtype=x.dtype, device=x.device)
    win[0] = win[n] = 1
    win[1:n] = 2
    return circular_apply(x, torch.fft.rfft(h * win, dim=0))


def fd_bidirectional(x, re, im):
    im = im.clone()
    im[0] = 0
    im[-1] = 0
    return circular_apply(x, torch.complex(re, im))


def toeplitz_dense(x, coef):
    """Per-channel dense Toeplitz product (reference, small sizes)."""
    n = x.shape[1]
    i = torch.arange(n, device=x.device)
    idx = i[:, None] - i[None, :] + n - 1
    t = coef[idx]  # (n, n, d)
    return torch.einsum("ijd,bjd->bid", t, x)


def ski(x, w, acoef, filt):
    z = torch.einsum("bnd,nr->brd", x, w)
    az = toeplitz_dense(z, acoef)
    y = torch.einsum("brd,nr->bnd", az, w)
    m = filt.shape[0]
    c = (m - 1) // 2
    # y_i += sum_j f_j x_{i-(j-c)}: conv1d is a correlation, so flip the taps.
    xt = x.transpose(1, 2)  # (B, d, n)
    kern = filt.flip(0).t().unsqueeze(1)  # (d, 1, m)
    conv = F.conv1d(F.pad(xt, (m - 1 - c, c)), kern, groups=x.shape[2])
    return y + conv.transpose(1, 2)


def interp_linear(n, r, device, dtype):
    """Dense linear interpolation matrix W (n x r) on r points evenly spaced on [0, n-1]."""
    h = (n - 1) / (r - 1)
    w = torch.zeros(n, r, dtype=dtype, device=device)
    for i in range(n):
        u = i / h
        a = min(int(math.floor(u)), r - 2)
        f = u - a
        if f < 1e-12:
            f = 0.0
        w[i, a] += 1 - f
        w[i, a + 1] += f
    return w


def timeit(fn, min_time, sync):
    fn()  # warm-up
    sync()
    n, total = 0, 0.0
    while total < min_time or n < 3:
        t0 = time.perf_counter()
        fn()
        sync()
        total += time.perf_counter() - t0
        n += 1
    return n, total / n


def line(group, dev, op, case, n, sec, rate, unit):
    print(f"BenchmarkSeq{group}/{dev}/{op}/{case}\t{n:8d}\t{sec * 1e9:14.0f} ns/op\t{rate:12.4g} {unit}", flush=True)


def run(args):
    if not torch.cuda.is_available():
        sys.exit("gpu_torch_seq.py: CUDA is not available to PyTorch (use --selftest on a machine without a GPU)")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    gen = torch.Generator(device=dev).manual_seed(1)
    attn = {"small": ATTN_SMALL, "large": ATTN_LARGE, "all": ATTN_SMALL + ATTN_LARGE}[args.cases]
    toep = {"small": TOEP_SMALL, "large": TOEP_LARGE, "all": TOEP_SMALL + TOEP_LARGE}[args.cases]
    ops = set(args.ops.split(",")) if args.ops else set(ATTN_OPS + TOEP_OPS)
    f32 = torch.float32
    for b, h, l, d, m in attn:
        case = f"B{b}H{h}L{l}D{d}m{m}"
        q = torch.randn(b, h, l, d, device=dev, dtype=f32, generator=gen)
        k = torch.randn(b, h, l, d, device=dev, dtype=f32, generator=gen)
        v = torch.randn(b, h, l, d, device=dev, dtype=f32, generator=gen)
        omega = torch.randn(m, d, device=dev, dtype=f32, generator=gen)
        bh = b * h
        for op in ATTN_OPS:
            if op not in ops:
                continue
            causal = op.endswith("causal")
            try:
                with torch.no_grad():
                    if op.startswith("softmax"):
                        fl = 4 * bh * l * l * d
                        variants = [("torch-f32", lambda: softmax_attention(q, k, v, causal))]
                        if args.half:
                            qh, kh, vh = q.half(), k.half(), v.half()
                            variants.append(("torch-f16", lambda: softmax_attention(qh, kh, vh, causal)))
                    else:
                        fl = 4 * bh * l * m * 2 * d
                        variants = [("torch-f32", lambda: linear_attention(q, k, v, omega, causal, args.chunk))]
                    for name, fn in variants:
                        n, sec = timeit(fn, args.min_time, sync)
                        line("Attention", name, op, case, n, sec, fl / sec / 1e9, "GFLOP/s")
            except torch.cuda.OutOfMemoryError as e:  # report and go on
                print(f"# {op} {case}: out of memory: {str(e).splitlines()[0]}", flush=True)
                torch.cuda.empty_cache()
        del q, k, v
        torch.cuda.empty_cache()
    for b, n, d in toep:
        case = f"B{b}n{n}d{d}"
        x = torch.randn(b, n, d, device=dev, dtype=f32, generator=gen)
        coef = torch.randn(2 * n - 1, d, device=dev, dtype=f32, generator=gen)
        khat = torch.randn(n + 1, d, device=dev, dtype=f32, generator=gen)
        khat2 = torch.randn(n + 1, d, device=dev, dtype=f32, generator=gen)
        w = interp_linear(n, SKI_R, dev, f32)
        acoef = torch.randn(2 * SKI_R - 1, d, device=dev, dtype=f32, generator=gen)
        filt = torch.randn(SKI_WIDTH, d, device=dev, dtype=f32, generator=gen) / SKI_WIDTH
        fns = {
            "tno": lambda: tno(x, coef),
            "ski": lambda: ski(x, w, acoef, filt),
            "fd-causal": lambda: fd_causal(x, khat),
            "fd-bidirectional": lambda: fd_bidirectional(x, khat, khat2),
        }
        by = 2 * b * n * d * 4
        for op in TOEP_OPS:
            if op in ops:
                with torch.no_grad():
                    cnt, sec = timeit(fns[op], args.min_time, sync)
                line("Toeplitz", "torch-f32", op, case, cnt, sec, by / sec / 1e9, "GB/s")


def selftest():
    """Checks, on the CPU in float64, that the forms timed above compute what they
    claim: chunked causal linear attention against the plain prefix sums, the FFT
    Toeplitz and FD forms against dense products, SKI's conv against the definition."""
    torch.manual_seed(0)
    dt = torch.float64
    b, h, l, d, m = 2, 2, 37, 8, 16
    q, k, v = (torch.randn(b, h, l, d, dtype=dt) for _ in range(3))
    omega = torch.randn(m, d, dtype=dt)
    sc = d ** -0.25
    qf, kf = favor(q * sc, omega, True), favor(k * sc, omega, False)
    s = torch.einsum("bhlm,bhsm->bhls", qf, kf).tril()
    want = (s @ v) / s.sum(-1, keepdim=True)
    worst = 0.0
    for c in (0, 1, 5, 8, 37, 64):
        got = linear_attention(q, k, v, omega, True, c)
        worst = max(worst, (got - want).abs().max().item())
    s = torch.einsum("bhlm,bhsm->bhls", qf, kf)
    worst = max(worst, (linear_attention(q, k, v, omega, False) - (s @ v) / s.sum(-1, keepdim=True)).abs().max().item())
    n, dch = 11, 3
    x = torch.randn(b, n, dch, dtype=dt)
    coef = torch.randn(2 * n - 1, dch, dtype=dt)
    worst = max(worst, (tno(x, coef) - toeplitz_dense(x, coef)).abs().max().item())
    khat = torch.randn(n + 1, dch, dtype=dt)
    y = fd_causal(x, khat)
    x2 = x.clone()
    x2[:, 6:] += 1
    worst = max(worst, (fd_causal(x2, khat)[:, :6] - y[:, :6]).abs().max().item())  # causal
    # The bidirectional FD kernel's Toeplitz coefficients, by the inverse rFFT.
    re, im = torch.randn(n + 1, dch, dtype=dt), torch.randn(n + 1, dch, dtype=dt)
    im0 = im.clone()
    im0[0] = im0[-1] = 0
    hk = torch.fft.irfft(torch.complex(re, im0), n=2 * n, dim=0)
    kc = torch.cat([hk[n + 1:], hk[:n]], 0)  # lags -(n-1)..n-1
    worst = max(worst, (fd_bidirectional(x, re, im) - toeplitz_dense(x, kc)).abs().max().item())
    w = interp_linear(n, 4, "cpu", dt)
    ac = torch.randn(7, dch, dtype=dt)
    for width in (1, 2, 4, 5):
        f = torch.randn(width, dch, dtype=dt)
        c = (width - 1) // 2
        ref = torch.einsum("brd,nr->bnd", toeplitz_dense(torch.einsum("bnd,nr->brd", x, w), ac), w)
        for j in range(width):
            o = j - c
            for i in range(max(0, o), min(n, n + o)):
                ref[:, i] += f[j] * x[:, i - o]
        worst = max(worst, (ski(x, w, ac, f) - ref).abs().max().item())
    print(f"selftest: largest difference {worst:.3g}")
    if not worst < 1e-10:
        sys.exit("gpu_torch_seq.py: selftest failed")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", choices=["large", "small", "all"], default="large")
    p.add_argument("--ops", default="", help="comma-separated subset of " + ",".join(ATTN_OPS + TOEP_OPS))
    p.add_argument("--half", action="store_true", help="also time float16 SDPA (FlashAttention)")
    p.add_argument("--chunk", type=int, default=0, help="causal chunk (0: device.Linear's default)")
    p.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per case")
    p.add_argument("--selftest", action="store_true", help="check the forms on the CPU and exit")
    args = p.parse_args()
    if args.selftest:
        selftest()
        return
    run(args)


if __name__ == "__main__":
    main()
