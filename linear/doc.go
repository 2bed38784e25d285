// Package linear fits ridge regression and ridge classification on feature
// matrices, in closed form and in one pass over the rows.
//
// A fit only needs the sufficient statistics of the rows (z_i, y_i):
//
//	ZᵀZ (D×D), Zᵀy (D×K), Σz (D), Σy (K), Σy² (K) and the row count n,
//
// which Stats accumulates chunk by chunk (Add) and combines across workers
// or machines (Merge): memory does not grow with the number of rows, and a
// distributed fit is a reduction of Stats values. With an intercept the
// statistics are centred, C = ZᵀZ − n·z̄z̄ᵀ and c = Zᵀy − n·z̄ȳᵀ, and the
// weights solve
//
//	(C + λI) w = c,  b = ȳ − z̄ᵀw,
//
// by Cholesky factorisation (gonum's mat.Cholesky). This is kernel ridge
// regression in the primal, on the random features of Eq. 2 of the analog
// paper; classification regresses one-hot targets and predicts the argmax,
// as scikit-learn's RidgeClassifier does (targets ±1).
//
// If the system is numerically singular (λ = 0 on rank-deficient features),
// the fit adds the smallest jitter ε·tr(C)/D, ε = 10⁻¹²…10⁻⁶, that makes the
// factorisation succeed and reports it in Model.Jitter.
//
// λ can be chosen from a grid by generalised cross-validation, computed from
// the eigendecomposition of C in O(D³ + |grid|·D·K), or by k-fold
// cross-validation, whose fold statistics are differences of Stats values,
// so neither needs a second pass over the data.
package linear
