#!/usr/bin/env python3
"""PyTorch CPU training twin of kernelkit's sequence classifiers (issue 37, "faster step").

The reference of scripts/train_twin.sh: for a model exported by kernelkit (kernelkit train
--export m.kks, or kernelkit export), it builds the same architecture as package arch specifies
and the native engine runs (arch.ModelConfig, defaults applied, read from the file's header), with the same
variables — the same scopes, names, shapes and (in, out) layouts, so the same parameter count,
asserted against the file's — loads the file's float32 weights, and either checks that its
forward pass gives kernelkit's logits and loss, or times training steps.

  all kinds  token embedding (plus learned positions for the attention kinds); per block two
             pre-norm residual sub-blocks x += f(RMSNorm x) (RMSNorm: x/sqrt(mean x^2 + 1e-6),
             no gain); masked mean pooling over the real tokens (id != 0), RMSNorm, linear
             classifier; mean softmax cross-entropy.
  tnn        GTU u = SiLU(xWu + bu), v = SiLU(xWv + bv), (u * TNO(v))Wo + bo, then GLU
             (SiLU(xW1 + b1) * (xW2 + b2))W3 + b3. TNO: Toeplitz coefficients
             t_k = lambda^|k| RPE(k/n), k = -(n-1)..n-1 (RPE MLP 1 -> rpe_hidden (x rpe_layers)
             -> e), applied by real FFTs of size 2n (circulant embedding).
  fd-tnn     as tnn; the RPE MLP of cos(m pi/n), m = 0..n, gives the frequency response
             re + i im (n+1 x 2e; im zeroed at m = 0, n), applied as irfft(rfft(x, 2n) * k^, 2n)
             (kernelkit forms the Toeplitz coefficients first, by arch.FDMatrices' inverse DFT:
             the same product).
  ski-tnn    as tnn; TNO: sparse depthwise convolution (ski_filter taps at offsets
             j - (m-1)/2) plus W A W^T x, W the n x r linear interpolation onto r inducing
             points, A the r x r Toeplitz matrix of M * values (M: the piecewise linear RPE on
             ski_grid points read at the warped offsets sign(kh) lambda^|kh|, h = (n-1)/(r-1);
             the middle grid value forced to zero), as arch.NewSKIPlan.
  transformer  Wo MHA(RMSNorm x) + bo with softmax(QK^T/sqrt(dh)) V, padding keys masked,
             then FFN GELU(xW1 + b1)W2 + b2 (exact GELU). qk_norm > 0: queries and keys
             L2-normalised to qk_norm * dh^(1/4).
  performer  as transformer with FAVOR+ attention: features exp(w.x' - |x'|^2/2 - max)/sqrt(m)
             of x' = x dh^-1/4 with the file's fixed projection (omega, m x dh per layer;
             favor+ and simrf), padding keys' features zeroed, Q'(K'^T V) / Q'(K'^T 1).
Not covered (the script refuses them): hrf (the angular hybrid estimator's three projections
and sgn features), the fitted performer families oprf and sderf (per-sequence eigen-fits),
causal models and adapters.

Check (--check ROWS.tsv): the logits of the rows (LRA TSV, Source<TAB>Target, tokenised as
kernelkit does: split at white space, "(" and ")" dropped, cut to the length, padded with id 0)
in float32 and, with the same weights, in float64, compared with kernelkit's
(--kk-scores, the CSV of `kernelkit predict --model M --data ROWS --scores`) and the mean
cross-entropy with kernelkit's (--kk-loss, test_loss of `kernelkit train --evaluate`). With
z64 the float64 logits, e(z) = max |z - z64| / (1 + |z64|): e_torch = e(torch float32) measures
the float32 rounding error of this model and these rows (its conditioning times u = 2^-24);
kernelkit's error e_kk = e(kernelkit) must stay below tol = sqrt(n+1) * max(e_torch, u): the
same function evaluated with different accumulation lengths — kernelkit's inverse-DFT and
Toeplitz products sum up to n+1 terms per output where PyTorch's FFTs take log2(2n) levels —
and rounding errors that grow like the square root of the number of terms summed. The loss
must agree within 2 * tol * (1 + max |z64|) (a log-softmax moves by at most twice the largest
logit change). It prints one JSON object (kind, params, the errors, the tolerance, the losses,
"match") and exits 1 on a mismatch.

Time (--time TRAIN.tsv): training steps — a batch of --batch rows drawn at random, forward,
cross-entropy, backward, AdamW (beta 0.9, 0.999, eps 1e-7, weight decay --weight-decay, the
learning rate of train.ScheduleAt: linear warm-up over --warmup steps, then a cosine to zero at
--steps) — until --seconds have passed and at least --min-steps steps are timed, the first step
(warm-up) left out, as kernelkit train's steps/s. It prints one JSON object: kind, steps timed,
steps/s, the last loss, threads, torch version.

Usage: python3 scripts/torch_seq_train.py --model m.kks --check rows.tsv \
         --kk-scores scores.csv --kk-loss 2.3141
       python3 scripts/torch_seq_train.py --model m.kks --time train.tsv --batch 32 \
         --seconds 8 --min-steps 3 --threads 2
(Debian's python3-torch is /usr/bin/python3's; PyTorch 1.13 has no torch.compile.)
"""
import argparse
import csv
import hashlib
import json
import math
import os
import struct
import sys
import time

# OpenMP's threads spin while they wait for work; on a machine shared with other jobs the
# spinning starves them (see scripts/torch_seq_forward.py). Set before torch loads its OpenMP
# runtime; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

MAGIC = b"\x89KKS\r\n\x1a\n"
FIXED = {"omega", "omega_trig", "tau", "tower"}
ATTENTION = {"performer", "transformer", "hrf"}
SUPPORTED = {"tnn", "fd-tnn", "ski-tnn", "transformer", "performer"}


def read_kks(path):
    """Returns the header (dict) and the weights ({"scope/name": float32 tensor}) of a .kks
    file, checking its magic, version, SHA-256 digest and size."""
    with open(path, "rb") as f:
        b = f.read()
    if not b.startswith(MAGIC):
        raise SystemExit(f"{path}: not a kernelkit inference file")
    version, hlen = struct.unpack_from("<II", b, len(MAGIC))
    if version != 1:
        raise SystemExit(f"{path}: format version {version}, this script reads 1")
    if hashlib.sha256(b[:-32]).digest() != b[-32:]:
        raise SystemExit(f"{path}: the SHA-256 digest does not match")
    off = len(MAGIC) + 8
    header = json.loads(b[off:off + hlen])
    off += hlen
    weights = {}
    for v in header["variables"]:
        n = math.prod(v["dims"])
        t = torch.frombuffer(bytearray(b[off:off + 4 * n]), dtype=torch.float32).reshape(v["dims"])
        weights[v["scope"] + "/" + v["name"]] = t
        off += 4 * n
    if off != len(b) - 32:
        raise SystemExit(f"{path}: {len(b) - 32 - off} bytes after the weights")
    return header, weights


def variables(c):
    """The variables of arch.ModelConfig.Variables for the configuration c (defaults applied):
    (scope/name, dims, fixed) in the file's order."""
    d, L, kind = c["width"], c["length"], c["kind"]
    out = [("/embed/tokens", [c["vocab"], d], False)]
    if kind in ATTENTION:
        out.append(("/embed/positions", [L, d], False))
    for i in range(c["depth"]):
        blk = f"/block_{i}"
        if kind in ATTENTION:
            dh = d // c["heads"]
            for w in ("q", "k", "v"):
                out += [(f"{blk}/mix/w{w}", [d, d], False), (f"{blk}/mix/b{w}", [d], False)]
            if kind == "performer":
                out.append((f"{blk}/mix/omega", [c["features"], dh], True))
            out += [(f"{blk}/mix/wo", [d, d], False), (f"{blk}/mix/bo", [d], False)]
            h = c["hidden"]
            out += [(f"{blk}/ffn/w1", [d, h], False), (f"{blk}/ffn/b1", [h], False),
                    (f"{blk}/ffn/w2", [h, d], False), (f"{blk}/ffn/b2", [d], False)]
            continue
        e = c["expand"] * d
        g = f"{blk}/gtu"
        out += [(f"{g}/wu", [d, e], False), (f"{g}/bu", [e], False), (f"{g}/wv", [d, e], False), (f"{g}/bv", [e], False)]
        if kind == "ski-tnn":
            out += [(f"{g}/tno/rpe", [c["ski_grid"], e], False), (f"{g}/tno/filter", [c["ski_filter"], e], False)]
        else:
            o = 2 * e if kind == "fd-tnn" else e
            fan = 1
            for layer in range(c["rpe_layers"] + 1):
                w = o if layer == c["rpe_layers"] else c["rpe_hidden"]
                out += [(f"{g}/tno/rpe/w{layer}", [fan, w], False), (f"{g}/tno/rpe/b{layer}", [w], False)]
                fan = w
        out += [(f"{g}/wo", [e, d], False), (f"{g}/bo", [d], False)]
        h = c["hidden"]
        u = f"{blk}/glu"
        out += [(f"{u}/w1", [d, h], False), (f"{u}/b1", [h], False), (f"{u}/w2", [d, h], False), (f"{u}/b2", [h], False),
                (f"{u}/w3", [h, d], False), (f"{u}/b3", [d], False)]
    out += [("/head/w", [d, c["classes"]], False), ("/head/b", [c["classes"]], False)]
    return out


def key(name):
    return name.strip("/").replace("/", "__")


def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def affine(x, w, b):
    """x @ w + b over the last axis, as one GEMM (addmm) on the rows."""
    return torch.addmm(b, x.reshape(-1, w.shape[0]), w).view(*x.shape[:-1], w.shape[1])


ACT = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu}


def ski_constants(n, r, grid, lam):
    """arch.NewSKIPlan's W (n x r) and M ((2r-1) x grid), in float64."""
    h = (n - 1) / (r - 1)
    W = torch.zeros(n, r, dtype=torch.float64)
    for i in range(n):
        u = i / h
        a = min(int(math.floor(u)), r - 2)
        f = u - a
        if f < 1e-12:
            f = 0.0
        W[i, a] += 1 - f
        W[i, a + 1] += f
    M = torch.zeros(2 * r - 1, grid, dtype=torch.float64)
    for k in range(-(r - 1), r):
        t = k * h
        x = 0.0 if t == 0 else math.copysign(lam ** abs(t), t)
        x = max(-1.0, min(1.0, x))
        u = (x + 1) / 2 * (grid - 1)
        i = min(int(math.floor(u)), grid - 2)
        f = u - i
        M[k + r - 1, i] += 1 - f
        M[k + r - 1, i + 1] += f
    return W, M


class Twin(nn.Module):
    """The classifier of configuration c with the variables of variables(c): trainable ones as
    parameters, fixed random features as buffers, each under key(scope/name)."""

    def __init__(self, c, dtype=torch.float32, qk_loop=False):
        super().__init__()
        self.c = c
        self.qk_loop = qk_loop
        self.kind = c["kind"]
        self.specs = variables(c)
        self.w = nn.ParameterDict()
        for name, dims, fixed in self.specs:
            t = torch.zeros(dims, dtype=dtype)
            if fixed:
                self.register_buffer(key(name), t)
            else:
                self.w[key(name)] = nn.Parameter(t)
        n, kind = c["length"], self.kind
        if kind == "tnn":
            k = torch.arange(-(n - 1), n, dtype=torch.float64)
            self.register_buffer("pos", (k / n).unsqueeze(1).to(dtype))
            self.register_buffer("decay", (c["lambda"] ** k.abs()).unsqueeze(1).to(dtype))
        elif kind == "fd-tnn":
            m = torch.arange(n + 1, dtype=torch.float64)
            self.register_buffer("fdin", torch.cos(m * math.pi / n).unsqueeze(1).to(dtype))
            inner = torch.ones(n + 1, 1, dtype=dtype)
            inner[0] = inner[n] = 0
            self.register_buffer("inner", inner)
        elif kind == "ski-tnn":
            W, M = ski_constants(n, c["ski_rank"], c["ski_grid"], c["lambda"])
            self.register_buffer("skiW", W.to(dtype))
            self.register_buffer("skiM", M.to(dtype))
            gm = torch.ones(c["ski_grid"], 1, dtype=dtype)
            gm[(c["ski_grid"] - 1) // 2] = 0
            self.register_buffer("gridmask", gm)
            r = c["ski_rank"]
            i = torch.arange(r)
            self.register_buffer("skiIdx", (i[:, None] - i[None, :] + r - 1))

    def p(self, name):
        k = key(name)
        return self.w[k] if k in self.w else getattr(self, k)

    def load(self, weights):
        with torch.no_grad():
            for name, dims, fixed in self.specs:
                self.p(name).copy_(weights[name])

    # Token mixers of the TNN kinds: v is B x n x e.
    def rpe(self, scope, x):
        h = x
        L = self.c["rpe_layers"]
        act = ACT[self.c["rpe_act"].lower()]
        for layer in range(L + 1):
            h = affine(h, self.p(f"{scope}/w{layer}"), self.p(f"{scope}/b{layer}"))
            if layer < L:
                h = act(h)
        return h

    def tno(self, scope, v):
        n = self.c["length"]
        e = v.shape[2]
        if self.kind == "fd-tnn":
            k = self.rpe(scope + "/rpe", self.fdin)  # (n+1) x 2e
            spec = torch.complex(k[:, :e], k[:, e:] * self.inner)
            return torch.fft.irfft(torch.fft.rfft(v, n=2 * n, dim=1) * spec, n=2 * n, dim=1)[:, :n]
        if self.kind == "tnn":
            coef = self.rpe(scope + "/rpe", self.pos) * self.decay  # (2n-1) x e, row k+n-1 = t_k
            circ = torch.cat([coef[n - 1:], coef.new_zeros(1, e), coef[:n - 1]])  # 2n x e
            spec = torch.fft.rfft(circ, dim=0)
            return torch.fft.irfft(torch.fft.rfft(v, n=2 * n, dim=1) * spec, n=2 * n, dim=1)[:, :n]
        # ski-tnn
        vals, filt = self.p(scope + "/rpe"), self.p(scope + "/filter")
        a = self.skiM @ (vals * self.gridmask)  # (2r-1) x e
        A = a[self.skiIdx]  # r x r x e, A[i, j] = a_{i-j}
        z = torch.einsum("nr,bne->bre", self.skiW, v)
        az = torch.einsum("ije,bje->bie", A, z)
        y = torch.einsum("nr,bre->bne", self.skiW, az)
        m = filt.shape[0]
        c0 = (m - 1) // 2
        # y_i += sum_j f_j x_{i-j+c0}: a depthwise cross-correlation with the taps reversed.
        xt = F.pad(v.transpose(1, 2), (m - 1 - c0, c0))
        conv = F.conv1d(xt, filt.flip(0).t().unsqueeze(1), groups=e)
        return y + conv.transpose(1, 2)

    def gtu(self, s, x):
        u = F.silu(affine(x, self.p(s + "/wu"), self.p(s + "/bu")))
        v = F.silu(affine(x, self.p(s + "/wv"), self.p(s + "/bv")))
        return affine(u * self.tno(s + "/tno", v), self.p(s + "/wo"), self.p(s + "/bo"))

    def glu(self, s, x):
        a = F.silu(affine(x, self.p(s + "/w1"), self.p(s + "/b1")))
        return affine(a * affine(x, self.p(s + "/w2"), self.p(s + "/b2")), self.p(s + "/w3"), self.p(s + "/b3"))

    def attention(self, s, x, mask):
        c = self.c
        b, n, d = x.shape
        H = c["heads"]
        dh = d // H

        def split(t):
            return t.view(b, n, H, dh).transpose(1, 2)

        q = split(affine(x, self.p(s + "/wq"), self.p(s + "/bq")))
        k = split(affine(x, self.p(s + "/wk"), self.p(s + "/bk")))
        v = split(affine(x, self.p(s + "/wv"), self.p(s + "/bv")))
        qk = c.get("qk_norm", 0) or 0
        if qk > 0:
            r = qk * dh ** 0.25
            q = r * q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-12)
            k = r * k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-12)
        if self.kind == "transformer" and self.qk_loop:
            # PyTorch 1.13's CPU bmm runs this shape (L x dh by dh x L) at a tenth of the
            # rate of the same products one by one (torch.mm): the tuned form.
            qs = (q * dh ** -0.5).reshape(b * H, n, dh)
            ks = k.reshape(b * H, n, dh)
            sc = torch.stack([qs[i] @ ks[i].t() for i in range(b * H)]).view(b, H, n, n)
            sc = sc.masked_fill(mask[:, None, None, :] == 0, -1e30)
            o = torch.softmax(sc, -1) @ v
        elif self.kind == "transformer":
            sc = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
            sc = sc.masked_fill(mask[:, None, None, :] == 0, -1e30)
            o = torch.softmax(sc, -1) @ v
        else:
            omega = self.p(s + "/omega")
            m = omega.shape[0]
            scale = dh ** -0.25

            def feats(t, rowwise):
                t = t * scale
                proj = t @ omega.t()
                sq = t.pow(2).sum(-1, keepdim=True) / 2
                shift = proj.amax(-1, keepdim=True) if rowwise else proj.amax((-1, -2), keepdim=True)
                return torch.exp(proj - sq - shift.detach()) / math.sqrt(m)

            qf = feats(q, True)
            kf = feats(k, False) * mask[:, None, :, None]
            num = qf @ (kf.transpose(-1, -2) @ v)
            den = qf @ kf.sum(2).unsqueeze(-1)
            o = num / den
        o = o.transpose(1, 2).reshape(b, n, d)
        return affine(o, self.p(s + "/wo"), self.p(s + "/bo"))

    def ffn(self, s, x):
        return affine(F.gelu(affine(x, self.p(s + "/w1"), self.p(s + "/b1"))), self.p(s + "/w2"), self.p(s + "/b2"))

    def forward(self, tokens):
        c = self.c
        mask = (tokens != 0).to(self.p("/embed/tokens").dtype)
        x = self.p("/embed/tokens")[tokens]
        att = self.kind in ATTENTION
        if att:
            x = x + self.p("/embed/positions")
        for i in range(c["depth"]):
            blk = f"/block_{i}"
            if att:
                x = x + self.attention(blk + "/mix", rms_norm(x), mask)
                x = x + self.ffn(blk + "/ffn", rms_norm(x))
            else:
                x = x + self.gtu(blk + "/gtu", rms_norm(x))
                x = x + self.glu(blk + "/glu", rms_norm(x))
        cnt = mask.sum(1, keepdim=True).clamp(min=1)
        pooled = (x * mask.unsqueeze(-1)).sum(1) / cnt
        return affine(rms_norm(pooled), self.p("/head/w"), self.p("/head/b"))


def read_rows(path, header):
    """Tokenises an LRA TSV file (Source, Target) as kernelkit does: ids (rows x L, int64,
    0-padded, cut at L) and labels (class index by name)."""
    vocab = {t: i for i, t in enumerate(header["vocabulary"]) if i > 0}
    drop = set(header["tokenizer"].get("drop") or [])
    classes = {name: i for i, name in enumerate(header["classes"])}
    L = header["model"]["length"]
    ids, labels = [], []
    with open(path, newline="") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        head = next(r)
        si, ti = head.index("Source"), head.index("Target")
        for row in r:
            toks = [vocab[t] for t in row[si].split() if t not in drop][:L]
            ids.append(toks + [0] * (L - len(toks)))
            labels.append(classes[row[ti].strip()])
    return torch.tensor(ids, dtype=torch.int64), torch.tensor(labels, dtype=torch.int64)


def build(header, weights, dtype, qk_loop=False):
    c = dict(header["model"])
    if c["kind"] not in SUPPORTED:
        raise SystemExit(f"torch_seq_train: kind {c['kind']} has no PyTorch twin here (supported: {', '.join(sorted(SUPPORTED))})")
    if c.get("causal") or c.get("adapter") or c.get("feature_map") not in (None, "", "favor+", "simrf"):
        raise SystemExit("torch_seq_train: causal models, adapters and fitted feature maps have no twin here")
    model = Twin(c, dtype, qk_loop)
    want = [(s["scope"] + "/" + s["name"], s["dims"]) for s in header["variables"]]
    have = [(n, d) for n, d, _ in model.specs]
    if want != have:
        raise SystemExit(f"torch_seq_train: the twin's variables differ from the file's:\n  file {want}\n  twin {have}")
    params = sum(p.numel() for p in model.parameters())
    file_params = sum(math.prod(s["dims"]) for s in header["variables"] if s["name"] not in FIXED)
    assert params == file_params, (params, file_params)
    model.load(weights)
    return model, params


def schedule(step, lr, warmup, steps):
    """train.ScheduleAt: linear warm-up lr (s+1)/warmup, then a cosine from lr to 0."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if steps <= warmup:
        return lr
    p = min(1.0, (step - warmup) / (steps - warmup))
    return lr * 0.5 * (1 + math.cos(math.pi * p))


def check(args, header, weights):
    tokens, labels = read_rows(args.check, header)
    m32, params = build(header, weights, torch.float32, args.qk_loop)
    m64, _ = build(header, weights, torch.float64, args.qk_loop)
    with torch.no_grad():
        z32 = m32(tokens).double()
        z64 = m64(tokens)
        l32 = F.cross_entropy(z32, labels).item()
        l64 = F.cross_entropy(z64, labels).item()
    rel = lambda z: ((z - z64).abs() / (1 + z64.abs())).max().item()
    u = 2.0 ** -24
    e_t = rel(z32)
    n = header["model"]["length"]
    tol = math.sqrt(n + 1) * max(e_t, u)
    out = {"kind": header["model"]["kind"], "qk_loop": args.qk_loop, "rows": len(labels), "params": params, "torch": torch.__version__,
           "e_torch32": e_t, "tol": tol, "loss_torch32": l32, "loss_torch64": l64}
    ok = True
    if args.kk_scores:
        with open(args.kk_scores, newline="") as f:
            r = csv.DictReader(f)
            cols = [f"score{j}" for j in range(header["model"]["classes"])]
            zk = torch.tensor([[float(row[c]) for c in cols] for row in r], dtype=torch.float64)
        if zk.shape != z64.shape:
            raise SystemExit(f"torch_seq_train: kernelkit scores {tuple(zk.shape)}, twin logits {tuple(z64.shape)}")
        out["e_kk"] = rel(zk)
        out["max_abs_logit_diff_kk_torch32"] = (zk - z32).abs().max().item()
        ok = ok and out["e_kk"] <= tol
    if args.kk_loss is not None:
        out["loss_kk"] = args.kk_loss
        out["loss_diff"] = abs(args.kk_loss - l64)
        out["loss_tol"] = 2 * tol * (1 + z64.abs().max().item())
        ok = ok and out["loss_diff"] <= out["loss_tol"]
    out["match"] = ok
    print(json.dumps(out))
    return 0 if ok else 1


def timing(args, header, weights):
    tokens, labels = read_rows(args.time, header)
    model, params = build(header, weights, torch.float32, args.qk_loop)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-7, weight_decay=args.weight_decay)
    g = torch.Generator().manual_seed(args.seed)
    times, loss = [], float("nan")
    start = None
    step = 0
    while True:
        t0 = time.perf_counter()
        idx = torch.randint(0, len(labels), (args.batch,), generator=g)
        for group in opt.param_groups:
            group["lr"] = schedule(step, args.lr, args.warmup, args.steps)
        opt.zero_grad(set_to_none=True)
        lo = F.cross_entropy(model(tokens[idx]), labels[idx])
        lo.backward()
        opt.step()
        loss = lo.item()
        el = time.perf_counter() - t0
        step += 1
        if step == 1:  # warm-up step, left out as kernelkit train leaves out its first
            start = time.perf_counter()
            continue
        times.append(el)
        if len(times) >= args.min_steps and time.perf_counter() - start >= args.seconds:
            break
    print(json.dumps({"kind": header["model"]["kind"], "qk_loop": args.qk_loop, "params": params, "batch": args.batch,
                      "length": header["model"]["length"], "steps_timed": len(times),
                      "steps_per_s": len(times) / sum(times), "last_loss": loss,
                      "threads": torch.get_num_threads(), "torch": torch.__version__}))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help=".kks file exported by kernelkit")
    ap.add_argument("--check", help="LRA TSV rows: check the twin's logits and loss")
    ap.add_argument("--kk-scores", help="kernelkit predict --scores CSV of the --check rows")
    ap.add_argument("--kk-loss", type=float, help="kernelkit's mean cross-entropy on the --check rows")
    ap.add_argument("--time", help="LRA TSV training rows: time training steps")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--steps", type=int, default=200, help="the schedule's total steps")
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--min-steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--qk-loop", action="store_true",
                    help="transformer: the tuned scores, queries scaled first and QK^T by one torch.mm per sequence and head")
    args = ap.parse_args()
    if (args.check is None) == (args.time is None):
        ap.error("give one of --check and --time")
    for name, v in [("--batch", args.batch), ("--threads", args.threads), ("--min-steps", args.min_steps)]:
        if v < 1:
            ap.error(f"{name} must be positive, got {v}")
    if not args.seconds >= 0:
        ap.error(f"--seconds must be non-negative, got {args.seconds}")
    torch.set_num_threads(args.threads)
    header, weights = read_kks(args.model)
    if args.check:
        return check(args, header, weights)
    return timing(args, header, weights)


if __name__ == "__main__":
    sys.exit(main())
