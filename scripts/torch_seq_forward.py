#!/usr/bin/env python3
"""PyTorch CPU forward pass of kernelkit's FD-TNN and Performer classifiers (issue 36).

The reference of scripts/serve_seq_bench.sh: the same architecture and parameter count as
nn.ModelConfig's models (package nn, the native engine), in float32 on the CPU, timed at batch
sizes of whole sequences of the model's length, under torch.inference_mode().

  fd-tnn     token embedding; per block x += GTU(RMSNorm x), x += GLU(RMSNorm x): GTU
             u = SiLU(xWu + bu), v = SiLU(xWv + bv), (u * TNO(v))Wo + bo; the FD-TNO's RPE MLP
             (1 -> rpe_hidden, ReLU, -> 2e) on cos(m*pi/n), m = 0..n, gives the frequency
             response re + i*im, its inverse real FFT over 2n points the Toeplitz kernel,
             applied by real FFTs of 2n points (kernelkit forms the coefficients with nn's
             inverse-DFT matrices instead: the same parameters, the same FFT products);
             GLU (SiLU(xW1 + b1) * (xW2 + b2))W3 + b3.
  performer  token and position embeddings; per block x += Wo * FAVOR+(RMSNorm x) + bo,
             x += FFN(RMSNorm x) (GELU); FAVOR+ positive features exp(w.x' - |x'|^2/2 - max)/sqrt(m)
             of x' = x * dh^-1/4 with a fixed orthogonal projection of m features per head,
             attention Q'(K'^T V) / Q'(K'^T 1).
  both       masked mean pooling, RMSNorm (eps 1e-6, no scale), linear classifier.

It prints one JSON object per case: kind, batch, the parameter and fixed-value counts, calls
timed, sequences/s and the p50 and p99 latency of a call in ms.

Usage: python3 scripts/torch_seq_forward.py --kind fd-tnn --length 512 --width 64 --depth 4 \
         --batch 1,16 --seconds 3 --threads 2
"""
import argparse
import json
import math
import os
import time

# OpenMP's threads spin while they wait for work; on a machine shared with other jobs (the
# benchmark's 2 cores) the spinning starves them: 2 s per forward pass where passive waiting
# takes 30 ms. Set before torch loads its OpenMP runtime; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

VOCAB, CLASSES = 46, 10


def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def param(*shape):
    return nn.Parameter(torch.randn(*shape) / math.sqrt(shape[0]))


class FDTNO(nn.Module):
    def __init__(self, n, e, hidden):
        super().__init__()
        self.n, self.e = n, e
        self.w0, self.b0 = param(1, hidden), nn.Parameter(torch.zeros(hidden))
        self.w1, self.b1 = param(hidden, 2 * e), nn.Parameter(torch.zeros(2 * e))
        self.register_buffer("inp", torch.cos(torch.arange(n + 1, dtype=torch.float32) * math.pi / n).unsqueeze(1))

    def forward(self, v):  # B x n x e
        n, e = self.n, self.e
        h = F.relu(self.inp @ self.w0 + self.b0) @ self.w1 + self.b1  # (n+1) x 2e
        kernel = torch.fft.irfft(torch.complex(h[:, :e], h[:, e:]), n=2 * n, dim=0)  # 2n x e
        spec = torch.fft.rfft(v, n=2 * n, dim=1) * torch.fft.rfft(kernel, dim=0)
        return torch.fft.irfft(spec, n=2 * n, dim=1)[:, :n]


class TNNBlock(nn.Module):
    def __init__(self, n, d, hidden, rpe_hidden):
        super().__init__()
        self.u, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.tno = FDTNO(n, d, rpe_hidden)
        self.g1, self.g2, self.g3 = nn.Linear(d, hidden), nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x):
        h = rms_norm(x)
        x = x + self.o(F.silu(self.u(h)) * self.tno(F.silu(self.v(h))))
        h = rms_norm(x)
        return x + self.g3(F.silu(self.g1(h)) * self.g2(h))


def orthogonal(m, d):
    blocks = []
    for _ in range((m + d - 1) // d):
        q, _ = torch.linalg.qr(torch.randn(d, d))
        blocks.append(q.T)
    w = torch.cat(blocks)[:m]
    return w * torch.randn(m, d).norm(dim=1, keepdim=True)


class PerformerBlock(nn.Module):
    def __init__(self, d, heads, hidden, features):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.f1, self.f2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.register_buffer("omega", orthogonal(features, self.dh))

    def features(self, x, rowwise):
        proj = x @ self.omega.T
        sq = x.pow(2).sum(-1, keepdim=True) / 2
        shift = proj.amax(-1, keepdim=True) if rowwise else proj.amax((-1, -2), keepdim=True)
        return torch.exp(proj - sq - shift) / math.sqrt(self.omega.shape[0])

    def forward(self, x, mask):
        b, n, d = x.shape
        h = rms_norm(x)
        split = lambda t: t.view(b, n, self.heads, self.dh).transpose(1, 2)
        sc = self.dh ** -0.25
        q = self.features(split(self.q(h)) * sc, True)
        k = self.features(split(self.k(h)) * sc, False) * mask[:, None, :, None]
        v = split(self.v(h))
        kv = k.transpose(-1, -2) @ v  # B x H x m x dh
        num = q @ kv
        den = q @ k.sum(2).unsqueeze(-1)
        att = (num / den).transpose(1, 2).reshape(b, n, d)
        x = x + self.o(att)
        return x + self.f2(F.gelu(self.f1(rms_norm(x))))


class Classifier(nn.Module):
    def __init__(self, kind, n, d, depth, heads, features, rpe_hidden):
        super().__init__()
        self.kind = kind
        self.emb = nn.Parameter(torch.randn(VOCAB, d))
        if kind == "performer":
            self.pos = nn.Parameter(0.1 * torch.randn(n, d))
            self.blocks = nn.ModuleList(PerformerBlock(d, heads, 2 * d, features) for _ in range(depth))
        else:
            self.blocks = nn.ModuleList(TNNBlock(n, d, 2 * d, rpe_hidden) for _ in range(depth))
        self.head = nn.Linear(d, CLASSES)

    def forward(self, tokens):
        mask = (tokens != 0).float()
        x = self.emb[tokens]
        if self.kind == "performer":
            x = x + self.pos
            for blk in self.blocks:
                x = blk(x, mask)
        else:
            for blk in self.blocks:
                x = blk(x)
        pooled = (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.head(rms_norm(pooled))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["fd-tnn", "performer"], required=True)
    ap.add_argument("--length", type=int, default=512)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--rpe-hidden", type=int, default=32)
    ap.add_argument("--batch", default="1,16")
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    for name, v in [("--length", args.length), ("--width", args.width), ("--depth", args.depth), ("--threads", args.threads)]:
        if v < 1:
            ap.error(f"{name} must be positive, got {v}")
    if not args.seconds > 0:
        ap.error(f"--seconds must be positive, got {args.seconds}")
    torch.manual_seed(1)
    torch.set_num_threads(args.threads)
    model = Classifier(args.kind, args.length, args.width, args.depth, args.heads, args.features, args.rpe_hidden).eval()
    params = sum(p.numel() for p in model.parameters())
    fixed = sum(b.numel() for n, b in model.named_buffers() if n.endswith("omega"))
    for batch in [int(b) for b in args.batch.split(",")]:
        tokens = torch.randint(1, VOCAB, (batch, args.length))
        times = []
        with torch.inference_mode():
            for _ in range(3):
                model(tokens)
            start = time.perf_counter()
            while time.perf_counter() - start < args.seconds:
                t0 = time.perf_counter()
                model(tokens)
                times.append(time.perf_counter() - t0)
        total = sum(times)
        times.sort()
        pct = lambda p: 1e3 * times[min(len(times) - 1, int(p * len(times)))]
        print(json.dumps({"kind": args.kind, "batch": batch, "params": params, "fixed": fixed, "calls": len(times),
                          "seq_per_s": round(batch * len(times) / total, 2), "p50_ms": round(pct(0.5), 2),
                          "p99_ms": round(pct(0.99), 2), "torch": torch.__version__, "threads": args.threads}))


if __name__ == "__main__":
    main()
