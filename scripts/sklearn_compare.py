#!/usr/bin/env python3
"""Side-by-side reference for kernelkit's fit benchmarks, using scikit-learn.

Default setting (the foundation issue): letter recognition, first 16000 rows
train, last 4000 test, features standardised on the training rows, RBF
kernel exp(-gamma ||x-y||^2) with gamma = 1/16, RBFSampler with D features
and RidgeClassifier(alpha=lambda). Other CSV files (label last) take
--train/--test/--gamma/--lambda: the first --train rows train, the next
--test rows test. Prints one JSON object per seed with test accuracy,
relative Gram error on the first 1000 test rows, and the wall time of fit +
predict (scaler, features, ridge, prediction; the Gram error is not timed),
then the mean. --float32 casts the data to float32 first, which
RBFSampler and RidgeClassifier keep (single-precision features and
normal equations).

Run with Debian's python3-sklearn (numpy on OpenBLAS once libopenblas-dev is
installed):  /usr/bin/python3 scripts/sklearn_compare.py data/letter.csv 512
"""
import argparse
import json
import time

import numpy as np
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("path", nargs="?", default="data/letter.csv")
    p.add_argument("D", nargs="?", type=int, default=512)
    p.add_argument("--train", type=int, default=16000)
    p.add_argument("--test", type=int, default=4000)
    p.add_argument("--gamma", type=float, default=1.0 / 16)
    p.add_argument("--lambda", dest="lam", type=float, default=0.5)
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    p.add_argument("--float32", action="store_true")
    a = p.parse_args()
    D, gamma, lam = a.D, a.gamma, a.lam
    raw = np.loadtxt(a.path, delimiter=",", skiprows=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    if a.float32:
        X = X.astype(np.float32)
    Xtr, ytr = X[:a.train], y[:a.train]
    Xte, yte = X[a.train:a.train + a.test], y[a.train:a.train + a.test]
    rows = []
    # One untimed warm-up run, so that library loading and first-call costs
    # are not charged to the first seed.
    RidgeClassifier(alpha=lam).fit(RBFSampler(gamma=gamma, n_components=D, random_state=99).fit_transform(
        StandardScaler().fit_transform(Xtr[:4000])), ytr[:4000])
    for seed in [int(s) for s in a.seeds.split(",")]:
        t0 = time.perf_counter()
        sc = StandardScaler().fit(Xtr)
        A, B = sc.transform(Xtr), sc.transform(Xte)
        rbf = RBFSampler(gamma=gamma, n_components=D, random_state=seed).fit(A)
        Ztr = rbf.transform(A)
        clf = RidgeClassifier(alpha=lam).fit(Ztr, ytr)
        acc = float((clf.predict(rbf.transform(B)) == yte).mean())
        secs = time.perf_counter() - t0
        T = B[:1000].astype(np.float64)
        K = rbf_kernel(T, gamma=gamma)
        Zt = rbf.transform(T)
        err = float(np.linalg.norm(K - Zt @ Zt.T) / np.linalg.norm(K))
        row = {"seed": seed, "test_accuracy": acc, "gram_error": err, "seconds": secs,
               "dtype": str(Ztr.dtype)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("test_accuracy", "gram_error", "seconds")}
    mean["features"] = D
    print(json.dumps({"mean": mean}))


if __name__ == "__main__":
    main()
