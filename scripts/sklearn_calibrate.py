#!/usr/bin/python3
"""scikit-learn peer of `kernelkit fit --calibrate` on letter: CalibratedClassifierCV(method='sigmoid',
cv=5, ensemble=False) around StandardScaler + RBFSampler(gamma=1/16, D=512) + RidgeClassifier(alpha=0.5),
16000/4000 rows, seeds 0-2: test accuracy, log-loss and ECE (15 bins, the same binning as
calibrate.ECE), and the softmax of the raw decision scores for comparison.
Run from the repository root: /usr/bin/python3 scripts/sklearn_calibrate.py [strat|kfold]"""
import numpy as np, sys, time
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import RidgeClassifier
from sklearn.calibration import CalibratedClassifierCV
from sklearn.preprocessing import StandardScaler
from sklearn.pipeline import make_pipeline
from sklearn.metrics import log_loss
from sklearn.model_selection import KFold
d = np.loadtxt('data/letter.csv', delimiter=',', skiprows=1)
X, y = d[:, :-1], d[:, -1].astype(int)
Xtr, ytr, Xte, yte = X[:16000], y[:16000], X[16000:], y[16000:]
def ece(p, y, bins=15):
    conf = p.max(1); pred = p.argmax(1); acc = pred == y
    e = 0
    edges = np.linspace(0, 1, bins+1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi)
        if lo == 0: m |= conf == 0
        if m.any(): e += m.mean() * abs(acc[m].mean() - conf[m].mean())
    return e
for seed in [0,1,2]:
    base = make_pipeline(StandardScaler(), RBFSampler(gamma=1/16, n_components=512, random_state=seed), RidgeClassifier(alpha=0.5))
    cv = sys.argv[1] if len(sys.argv) > 1 else 'strat'
    cvobj = 5 if cv == 'strat' else KFold(5)
    t=time.time()
    cal = CalibratedClassifierCV(base, method='sigmoid', cv=cvobj, ensemble=False).fit(Xtr, ytr)
    p = cal.predict_proba(Xte)
    print(seed, 'acc', (cal.predict(Xte)==yte).mean(), 'll', log_loss(yte, p), 'ece', ece(p, yte), 'sec', time.time()-t)
    base.fit(Xtr, ytr)
    s = base.decision_function(Xte)
    sm = np.exp(s - s.max(1, keepdims=True)); sm /= sm.sum(1, keepdims=True)
    print('  softmax(±1 scores) ll', log_loss(yte, sm), 'ece', ece(sm, yte), 'acc', (s.argmax(1)==yte).mean())
