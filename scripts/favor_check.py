#!/usr/bin/env python3
"""Independent numpy FAVOR+ (positive features, orthogonal projections) against exact softmax
attention on N(0,1) Q, K, V with d = 16: output MSE per L and m, mean of 3 seeds. A cross-check of
kernelkit attention (run: /usr/bin/python3 scripts/favor_check.py)."""
import numpy as np
def exact(q,k,v):
    d=q.shape[1]; s=q@k.T/np.sqrt(d); s-=s.max(1,keepdims=True); p=np.exp(s); p/=p.sum(1,keepdims=True); return p@v
def orf(m,d,rng):
    blocks=[]
    for _ in range((m+d-1)//d):
        g=rng.standard_normal((d,d)); qm,_=np.linalg.qr(g); blocks.append(qm.T)
    w=np.vstack(blocks)[:m]
    norms=np.linalg.norm(rng.standard_normal((m,d)),axis=1)
    return w*norms[:,None]
def favor(q,k,v,m,rng):
    d=q.shape[1]; c=d**-0.25
    w=orf(m,d,rng)
    def phi(x):
        xs=x*c; a=xs@w.T - (xs**2).sum(1,keepdims=True)/2
        return np.exp(a - a.max())/np.sqrt(m)
    qp,kp=phi(q),phi(k)
    num=qp@(kp.T@v); den=qp@kp.sum(0)
    return num/den[:,None]
for L in [1024,4096]:
  for m in [16,64,256]:
    ms=[]
    for s in range(3):
        rng=np.random.default_rng(s)
        q,k,v=[rng.standard_normal((L,16)) for _ in range(3)]
        e=exact(q,k,v); o=favor(q,k,v,m,rng)
        ms.append(((o-e)**2).mean())
    print(L,m,np.mean(ms), "outvar", (e**2).mean())
