// Package calibrate turns a classifier's decision scores into class
// probabilities by Platt's sigmoid calibration, as scikit-learn's
// CalibratedClassifierCV(method='sigmoid') does.
//
// # The sigmoid
//
// For a binary problem with decision score s, Platt (1999) models
//
//	P(y = 1 | s) = 1/(1 + exp(A·s + B))
//
// and fits A and B on scores the classifier did not see in training (here:
// out-of-fold scores, see package model). A good score has A < 0. The fit
// minimises the cross-entropy against Platt's regularised targets
//
//	t₊ = (N₊ + 1)/(N₊ + 2) for the N₊ positive rows,
//	t₋ = 1/(N₋ + 2)        for the N₋ negative rows,
//
//	F(A, B) = −Σᵢ [tᵢ log pᵢ + (1 − tᵢ) log(1 − pᵢ)],  pᵢ = 1/(1 + exp(A·sᵢ + B)),
//
// the maximum a posteriori estimate under a uniform prior on the label
// probability (Platt's section 2.2), which keeps A and B finite when the
// scores separate the classes. F is convex; with zᵢ = A·sᵢ + B its
// gradient and Hessian are
//
//	∇F = Σᵢ (tᵢ − pᵢ)·(sᵢ, 1),   ∇²F = Σᵢ pᵢ(1 − pᵢ)·(sᵢ, 1)(sᵢ, 1)ᵀ.
//
// FitSigmoid minimises F by the Newton method with backtracking line search
// of Lin, Lin & Weng (2007): start at A = 0, B = log((N₋ + 1)/(N₊ + 1));
// each step solves (∇²F + σI)d = −∇F with σ = 10⁻¹², halves the step from 1
// until the Armijo condition F(x + αd) < F(x) + 10⁻⁴·α·∇Fᵀd holds, and
// stops after a full step once the step changes A and B by less than
// 10⁻¹² relative or the Newton decrement −∇Fᵀd (twice F's distance to its
// minimum, to second order) is below 10⁻¹²·(1 + F), where F's rounding
// hides any further decrease from the line search (the reference stops
// at |∇F| < 10⁻⁵; the tighter test costs one or two more iterations, seven
// or eight in all on letter's classes, and puts the fit within about 10⁻⁸
// of a brute-force minimisation), or when no step length down to 10⁻¹⁰
// decreases F. Each term of F is evaluated without overflow as
//
//	tᵢzᵢ + log(1 + exp(−zᵢ))      for zᵢ ≥ 0,
//	(tᵢ − 1)zᵢ + log(1 + exp(zᵢ)) for zᵢ < 0,
//
// Lin, Lin & Weng's stable form. scikit-learn minimises the same F by
// L-BFGS from the same start; the minimiser is unique, so both give the
// same A and B up to their stopping tolerances.
//
// # Weights
//
// FitSigmoidWeighted and FitWeighted take row weights wᵢ ≥ 0 (sample
// weights, as scikit-learn's CalibratedClassifierCV passes sample_weight
// to its sigmoid fit):
//
//	F(A, B) = −Σᵢ wᵢ [tᵢ log pᵢ + (1 − tᵢ) log(1 − pᵢ)],
//
// so the gradient and Hessian above gain the factor wᵢ in each term. A row
// of weight zero is no row: it is dropped before the fit. Platt's prior
// counts N₊ and N₋ stay counts, not sums of weights, as scikit-learn 1.2
// computes them from the labels alone — but of the rows of positive
// weight only, where scikit-learn 1.2 counts rows of weight zero too (its
// later versions sum the weights instead). So integer weights give the
// fit of repeated rows except for the targets t₊ and t₋, which differ by
// O(1/N±). The weights are rescaled to mean one
// before the Newton iteration: the minimiser does not move, and the
// stopping tests, relative to F, and σ do not depend on the weights'
// scale.
//
// # Several classes
//
// For k > 2 classes Fit fits one sigmoid per class, one-vs-rest, on the
// class's own score column (class c positive, every other class negative),
// and normalises the k sigmoid probabilities qᶜ to sum to one:
//
//	P(c | s) = qᶜ(s_c) / Σⱼ qʲ(s_j).
//
// The normalisation is computed from log qᶜ = −log(1 + exp(A_c·s_c + B_c))
// by the log-sum-exp, so it never divides zero by zero (scikit-learn falls
// back to the uniform distribution when every qᶜ underflows; the two agree
// whenever scikit-learn's sum is a normal number). Each log qᶜ is floored
// at −MaxFloat64, so that a score whose A_c·s_c + B_c overflows gives
// probability zero next to any class above the floor, and a row whose
// every class overflows the uniform distribution, not NaN. For k = 2, as in
// scikit-learn, one sigmoid is fitted, on the score of class 1:
// P(1 | s) = q(s₁) and P(0 | s) = 1 − P(1 | s) (computed as
// 1/(1 + exp(−(A·s₁ + B))), the same value without cancellation).
//
// # Quality measures
//
// LogLoss is the mean negative log-probability of the true class (with
// probabilities clipped to [10⁻¹⁵, 1], scikit-learn's log_loss's eps of
// its older versions; an entry that is NaN or outside [0, 1] is an error,
// not clipped); ECE is the expected calibration error of Guo et al.
// (2017), Eq. 3: the rows are put in M equal-width bins of the top-class
// probability, and ECE = Σ_m (|B_m|/n)·|acc(B_m) − conf(B_m)|. Softmax is
// the uncalibrated baseline exp(s_c)/Σⱼ exp(s_j).
//
// # References
//
// J. Platt, Probabilistic outputs for support vector machines and
// comparisons to regularized likelihood methods, Advances in Large Margin
// Classifiers, 1999.
//
// H.-T. Lin, C.-J. Lin and R. C. Weng, A note on Platt's probabilistic
// outputs for support vector machines, Machine Learning 68, 2007.
//
// C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, On calibration of modern
// neural networks, ICML 2017.
package calibrate
