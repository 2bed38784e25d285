#!/usr/bin/env python3
"""PyTorch reference for kernelkit's feature-map and ridge benchmarks on the GPU (issue 18).

Times, on CUDA in float32 with TF32 off (--tf32 adds the same cases with TF32 on, device
"torch-tf32"), the cases of device/bench_test.go and prints one line per case in the format
of `go test -bench`, device "torch-f32", so that scripts/gpu_run.sh puts the lines of both in
one table:

  BenchmarkMapPositive/torch-f32/resident/n1048576d64D256   500   3900000 ns/op   2202 GFLOP/s   344 GB/s

The operations are the device graphs' (device/maps_forms.go, device/ridge.go):

  MapPositive  resident   FAVOR+ positive map with its log-domain stabilisation on rows
                          already on the GPU: a = x Wᵀ, z = exp(a − max_j a), log-scale
                          s = max_j a − ‖x‖²/2 − ½ log m (device.Map.TransformScaled's graph);
                          the features stay on the GPU.
  RidgeStats   stats      rbf cos features √(2/D)·cos(x Wᵀ + b) of host float64 rows copied
                          to the GPU in float32 batches, ZᵀZ, ZᵀY and Σz per batch in float32
                          added into float64 sums on the GPU, copied back at the end.
  RidgeFit     fit        the statistics, then the centred ridge system (ZᵀZ − n z̄z̄ᵀ + λI)
                          solved by Cholesky in float64 on the GPU (kernelkit solves on the
                          host CPU).

Rates are the nominal ones of the Go benchmarks: GFLOP/s of the products (2nDd for the
projection; 2nD² + 2nDK for the statistics; D³/3 for the solve) and, for the map, GB/s of the
float32 rows read and features written. Each case runs after a warm-up, timed between
torch.cuda.synchronize() calls, repeated until --min-time seconds have passed.

Usage: python3 scripts/gpu_torch_maps.py [--cases large|small|all] [--tf32] [--min-time S]
       python3 scripts/gpu_torch_maps.py --selftest   (CPU, float64: checks the forms)
"""
import argparse
import math
import sys
import time

import torch

# (n, d, D) of the map and (n, d, D, batch) of the ridge cases, as in device/bench_test.go.
MAP_SMALL = [(4096, 64, 256)]
MAP_LARGE = [(1 << 20, 64, 256)]
RIDGE_SMALL = [(4096, 28, 256, 1024)]
RIDGE_LARGE = [(1 << 20, 28, 2048, 1 << 15)]
LAMBDA = 1e-3


def positive_scaled(x, w):
    """device.Map.TransformScaled of the softmax positive map: features and log-scales."""
    m = w.shape[0]
    a = x @ w.t()
    mx = a.amax(dim=1, keepdim=True)
    off = -0.5 * (x * x).sum(dim=1, keepdim=True) - 0.5 * math.log(m)
    return torch.exp(a - mx), (off + mx).squeeze(1)


def rbf_cos(x, w, b):
    """The rbf cos map √(2/D)·cos(x Wᵀ + b) (W includes the bandwidth √(2γ))."""
    return math.sqrt(2.0 / w.shape[0]) * torch.cos(x @ w.t() + b)


def ridge_stats(x_host, y_host, w, b, batch, dev):
    """ZᵀZ, ZᵀY, Σz (float64, on dev) of the rows of host float64 x, y, in batches of w's type."""
    D = w.shape[0]
    k = y_host.shape[1]
    zz = torch.zeros(D, D, dtype=torch.float64, device=dev)
    zy = torch.zeros(D, k, dtype=torch.float64, device=dev)
    sz = torch.zeros(D, dtype=torch.float64, device=dev)
    for lo in range(0, x_host.shape[0], batch):
        xb = x_host[lo:lo + batch].to(dev, dtype=w.dtype)
        yb = y_host[lo:lo + batch].to(dev, dtype=w.dtype)
        z = rbf_cos(xb, w, b)
        zz += (z.t() @ z).double()
        zy += (z.t() @ yb).double()
        sz += z.sum(dim=0).double()
    return zz, zy, sz


def ridge_solve(zz, zy, sz, sum_y, n, lam):
    """Weights and intercept of ridge regression with intercept from the sums (float64)."""
    zbar = sz / n
    ybar = sum_y / n
    c = zz - n * torch.outer(zbar, zbar) + lam * torch.eye(zz.shape[0], dtype=zz.dtype, device=zz.device)
    cy = zy - n * torch.outer(zbar, ybar)
    chol = torch.linalg.cholesky(c)
    wts = torch.cholesky_solve(cy, chol)
    return wts, ybar - zbar @ wts


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


def line(op, dev, variant, case, n, sec, rates):
    cols = "\t".join(f"{v:12.4g} {unit}" for v, unit in rates)
    print(f"Benchmark{op}/{dev}/{variant}/{case}\t{n:8d}\t{sec * 1e9:14.0f} ns/op\t{cols}", flush=True)


def run(args):
    if not torch.cuda.is_available():
        sys.exit("gpu_torch_maps.py: CUDA is not available to PyTorch (use --selftest on a machine without a GPU)")
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    maps = {"small": MAP_SMALL, "large": MAP_LARGE, "all": MAP_SMALL + MAP_LARGE}[args.cases]
    ridges = {"small": RIDGE_SMALL, "large": RIDGE_LARGE, "all": RIDGE_SMALL + RIDGE_LARGE}[args.cases]
    modes = [("torch-f32", False)] + ([("torch-tf32", True)] if args.tf32 else [])
    gen = torch.Generator(device=dev).manual_seed(1)
    cpu = torch.Generator().manual_seed(1)
    for name, tf32 in modes:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        with torch.no_grad():
            for n, d, D in maps:
                x = 0.35 * torch.randn(n, d, device=dev, dtype=torch.float32, generator=gen)
                w = torch.randn(D, d, device=dev, dtype=torch.float32, generator=gen)
                it, sec = timeit(lambda: positive_scaled(x, w), args.min_time, sync)
                line("MapPositive", name, "resident", f"n{n}d{d}D{D}", it, sec,
                     [(2 * n * d * D / sec / 1e9, "GFLOP/s"), (4 * n * (d + D) / sec / 1e9, "GB/s")])
                del x, w
                torch.cuda.empty_cache()
            for n, d, D, batch in ridges:
                x = torch.randn(n, d, dtype=torch.float64, generator=cpu)
                y = (x[:, 0] * x[:, 1]).unsqueeze(1)
                gamma = 1.0 / d
                w = math.sqrt(2 * gamma) * torch.randn(D, d, device=dev, dtype=torch.float32, generator=gen)
                b = 2 * math.pi * torch.rand(D, device=dev, dtype=torch.float32, generator=gen)
                case = f"n{n}d{d}D{D}"
                stats_flops = 2 * n * D * d + 2 * n * D * D + 2 * n * D

                def stats():
                    zz, zy, sz = ridge_stats(x, y, w, b, batch, dev)
                    return zz.cpu(), zy.cpu(), sz.cpu()

                def fit():
                    zz, zy, sz = ridge_stats(x, y, w, b, batch, dev)
                    sum_y = y.sum(dim=0).to(dev)
                    wts, icpt = ridge_solve(zz, zy, sz, sum_y, n, LAMBDA)
                    return wts.cpu(), icpt.cpu()

                it, sec = timeit(stats, args.min_time, sync)
                line("RidgeStats", name, "stats", case, it, sec, [(stats_flops / sec / 1e9, "GFLOP/s")])
                it, sec = timeit(fit, args.min_time, sync)
                line("RidgeFit", name, "fit", case, it, sec, [((stats_flops + D ** 3 / 3) / sec / 1e9, "GFLOP/s")])
                del x, y, w, b
                torch.cuda.empty_cache()


def selftest():
    """Checks the forms on the CPU in float64 against their definitions."""
    torch.manual_seed(0)
    dt = torch.float64
    worst = 0.0
    # Positive map: exp(s)·z is exp(wᵀx − ‖x‖²/2)/√m.
    x = 0.5 * torch.randn(7, 5, dtype=dt)
    w = torch.randn(16, 5, dtype=dt)
    z, s = positive_scaled(x, w)
    want = torch.exp(x @ w.t() - 0.5 * (x * x).sum(1, keepdim=True)) / math.sqrt(16)
    worst = max(worst, ((z * torch.exp(s).unsqueeze(1) - want).abs().max() / want.abs().max()).item())
    if z.max().item() > 1 + 1e-15:
        sys.exit("selftest: scaled positive features above 1")
    # Statistics in batches equal those of the whole feature matrix; the
    # solve matches the normal equations.
    x = torch.randn(50, 3, dtype=dt)
    y = torch.randn(50, 2, dtype=dt)
    w = torch.randn(12, 3, dtype=dt)
    b = 2 * math.pi * torch.rand(12, dtype=dt)
    zz, zy, sz = ridge_stats(x, y, w, b, 16, torch.device("cpu"))
    zf = rbf_cos(x, w, b)
    for got, ref in ((zz, zf.t() @ zf), (zy, zf.t() @ y), (sz, zf.sum(0))):
        worst = max(worst, ((got - ref).abs().max() / ref.abs().max()).item())
    wts, icpt = ridge_solve(zz, zy, sz, y.sum(0), 50, LAMBDA)
    zc = zf - zf.mean(0)
    ref = torch.linalg.solve(zc.t() @ zc + LAMBDA * torch.eye(12, dtype=dt), zc.t() @ (y - y.mean(0)))
    worst = max(worst, ((wts - ref).abs().max() / ref.abs().max()).item())
    pred = zf @ wts + icpt
    ref_pred = zc @ ref + y.mean(0)
    worst = max(worst, ((pred - ref_pred).abs().max() / ref_pred.abs().max()).item())
    print(f"selftest: largest difference {worst:.3g}")
    if worst > 1e-9:
        sys.exit("selftest: failed")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", choices=["large", "small", "all"], default="large")
    p.add_argument("--tf32", action="store_true", help="also time the cases with TF32 products (torch-tf32)")
    p.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per case")
    p.add_argument("--selftest", action="store_true", help="check the forms on the CPU and exit")
    args = p.parse_args()
    if args.selftest:
        selftest()
        return
    run(args)


if __name__ == "__main__":
    main()
