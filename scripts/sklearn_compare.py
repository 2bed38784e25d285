#!/usr/bin/env python3
"""Side-by-side reference for kernelkit's letter benchmark, using scikit-learn.

Setting (the foundation issue): letter recognition, first 16000 rows train,
last 4000 test, features standardised on the training rows, RBF kernel
exp(-gamma ||x-y||^2) with gamma = 1/16, RBFSampler with D features and
RidgeClassifier(alpha=lambda). Prints one JSON object per seed with test
accuracy, relative Gram error on the first 1000 test rows, and the wall time
of fit + predict (scaler, features, ridge, prediction; the Gram error is not
timed), then the mean.

Run with Debian's python3-sklearn (numpy on OpenBLAS once libopenblas-dev is
installed):  /usr/bin/python3 scripts/sklearn_compare.py data/letter.csv
"""
import json
import sys
import time

import numpy as np
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "data/letter.csv"
    D = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    gamma, lam = 1.0 / 16, 0.5
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    Xtr, ytr, Xte, yte = X[:16000], y[:16000], X[16000:], y[16000:]
    rows = []
    # One untimed warm-up run, so that library loading and first-call costs
    # are not charged to the first seed.
    RidgeClassifier(alpha=lam).fit(RBFSampler(gamma=gamma, n_components=D, random_state=99).fit_transform(
        StandardScaler().fit_transform(Xtr)), ytr)
    for seed in range(3):
        t0 = time.perf_counter()
        sc = StandardScaler().fit(Xtr)
        A, B = sc.transform(Xtr), sc.transform(Xte)
        rbf = RBFSampler(gamma=gamma, n_components=D, random_state=seed).fit(A)
        Ztr = rbf.transform(A)
        clf = RidgeClassifier(alpha=lam).fit(Ztr, ytr)
        acc = float((clf.predict(rbf.transform(B)) == yte).mean())
        secs = time.perf_counter() - t0
        T = B[:1000]
        K = rbf_kernel(T, gamma=gamma)
        Zt = rbf.transform(T)
        err = float(np.linalg.norm(K - Zt @ Zt.T) / np.linalg.norm(K))
        row = {"seed": seed, "test_accuracy": acc, "gram_error": err, "seconds": secs}
        rows.append(row)
        print(json.dumps(row))
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("test_accuracy", "gram_error", "seconds")}
    mean["features"] = D
    print(json.dumps({"mean": mean}))


if __name__ == "__main__":
    main()
