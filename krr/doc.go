// Package krr fits exact kernel ridge regression and classification, the
// reference that kernelkit's random-feature and Nyström models converge
// to as their dimension grows.
//
// The representer theorem puts the minimiser of
//
//	Σ_i (y_i − f(x_i))² + λ‖f‖²_H
//
// in the span of k(·, x_i): f(x) = Σ_i α_i k(x, x_i), with the dual
// coefficients solving (K + λI)·α = y (K the n×n kernel matrix of the
// training rows; scikit-learn's KernelRidge solves the same system). With
// an unpenalised intercept b, as package linear fits ridge models on
// features, the problem is solved on centred data: with H = I − 11ᵀ/n,
//
//	(HKH + λI)·α = Hy,   b = ȳ − rᵀα,   r_i = (1/n)·Σ_j K_ij,
//
// and since 1ᵀα = 0 the prediction is f(x) = k(x, X)ᵀα + b. These are the
// predictions of linear ridge regression with intercept on any feature
// map z with z(x)ᵀz(y) = k(x, y), which is why models on random features
// with E[ZZᵀ] = K, and Nyström features with every row a landmark,
// converge to them. One-vs-rest classification regresses one-hot targets
// (n×K) and predicts the argmax, as linear.Fit and scikit-learn's
// RidgeClassifier do.
//
// Cost: the kernel matrix takes n² numbers and the Cholesky factorisation
// (in place, gonum's lapack64.Potrf) n³/3 flops; Fit refuses more than
// MaxRows = 32768 rows with an error that states the memory the kernel
// matrix would need (Memory). Prediction costs O(n) kernel evaluations per
// row, in blocks of rows.
//
// A Model can be stored in a model file as a linear model (Model.Linear)
// on the kernel-columns map z(x) = k(x, X_train) (Columns, registered in
// package catalog under ColumnsSpecKind): the file then holds the training
// rows and the dual coefficients, as scikit-learn's pickled KernelRidge
// holds X_fit_ and dual_coef_.
package krr
