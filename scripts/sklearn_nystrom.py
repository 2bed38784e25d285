#!/usr/bin/env python3
"""scikit-learn's side of scripts/compare_nystrom.sh: Nystroem and RBFSampler.

Setting (as scripts/compare.sh): the first TRAIN rows train, the rest test,
features standardised on the training rows, RBF kernel exp(-gamma ||x-y||^2),
D components, RidgeClassifier(alpha=lambda). Prints one JSON object per map
and seed with the test accuracy, the relative Gram error
||K - ZZ^T||_F / ||K||_F on the first 1000 test rows and the wall time of
fit + predict (scaler, map fit and transform, ridge, prediction; the Gram
error is not timed), in the row format of kernelkit's study.NystromRow.

Run with Debian's python3-sklearn:
  /usr/bin/python3 scripts/sklearn_nystrom.py data/letter.csv 16000 512 0.0625 0.5 letter
"""
import json
import sys
import time

import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler


def main():
    path = sys.argv[1]
    ntrain = int(sys.argv[2])
    D = int(sys.argv[3])
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    gamma = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "auto" else 1.0 / X.shape[1]
    lam = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5
    name = sys.argv[6] if len(sys.argv) > 6 else path
    seeds = int(sys.argv[7]) if len(sys.argv) > 7 else 3
    Xtr, ytr, Xte, yte = X[:ntrain], y[:ntrain], X[ntrain:], y[ntrain:]
    maps = {
        "nystrom": lambda s: Nystroem(kernel="rbf", gamma=gamma, n_components=D, random_state=s),
        "rff": lambda s: RBFSampler(gamma=gamma, n_components=D, random_state=s),
    }
    # One untimed warm-up run, so that library loading and first-call costs
    # are not charged to the first seed.
    RidgeClassifier(alpha=lam).fit(maps["nystrom"](99).fit_transform(StandardScaler().fit_transform(Xtr)), ytr)
    for mname, make in maps.items():
        for seed in range(seeds):
            t0 = time.perf_counter()
            sc = StandardScaler().fit(Xtr)
            A, B = sc.transform(Xtr), sc.transform(Xte)
            mp = make(seed).fit(A)
            clf = RidgeClassifier(alpha=lam).fit(mp.transform(A), ytr)
            acc = float((clf.predict(mp.transform(B)) == yte).mean())
            secs = time.perf_counter() - t0
            T = B[:1000]
            K = rbf_kernel(T, gamma=gamma)
            Z = mp.transform(T)
            err = float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))
            print(json.dumps({"data": name, "map": mname, "method": "uniform" if mname == "nystrom" else "",
                              "components": D, "seed": seed, "test_accuracy": acc, "gram_error": err,
                              "gram_rows": len(T), "seconds": secs, "backend": "scikit-learn " + __import__("sklearn").__version__}))


if __name__ == "__main__":
    main()
