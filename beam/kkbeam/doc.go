// Package kkbeam fits kernelkit's kernel ridge models on Apache Beam, for
// training sets that live in many files and need not fit one machine, and
// predicts with them in batch. The same pipelines run in process (Beam's
// direct runner, or Prism, the SDK's local portable runner) and on Flink,
// Spark or Google Cloud Dataflow through Beam's portable runners; this
// package has no scheduler of its own. It is a Go module of its own
// (github.com/kernelkit/kernelkit/beam), so that kernelkit's core module
// keeps its small dependency set.
//
// # The fit: model's passes, merged across workers
//
// A ridge fit on random features z(x) ∈ ℝᴰ needs only sufficient
// statistics, sums over rows that merge by addition:
//
//	n, Σ z, Σ y, Σ y², ZᵀZ = Σ z zᵀ (D×D), ZᵀY = Σ z yᵀ (D×K)
//
// (linear.Stats; with an intercept the solve centres them). Standardising
// the inputs first needs their means and variances, which merge by the
// pairwise update of Chan, Golub and LeVeque (data.ScalerAccumulator):
//
//	n = n_a + n_b,  δ = μ_b − μ_a,  μ = μ_a + δ n_b/n,  M₂ = M₂a + M₂b + δ² n_a n_b/n.
//
// The Beam fit is model.Fit's pipeline (package model, pipeline.go) with
// its pass states in Beam's CombineFns:
//
//   - Pass 1 reads every file (Beam's fileio matches and opens them; each
//     file is parsed in order by ReadInput with package data's parsers —
//     CSV and LIBSVM by ReadFile, Parquet by ReadParquet over
//     data.ParquetReader, the columns of CSV and Parquet chosen by name by
//     data.MatchColumns — so rows keep their file and line, a Parquet
//     file's row number) and combines a Prep: model's census
//     (model.Census: columns, labels, target columns, weights, the
//     scaler's moments; model.Census.Merge), the rows of each file and
//     class, bad rows and the columns, label, weight and target columns
//     (every shard must have the same).
//   - The driver plans the later passes from the census
//     (model.Census.Plan: task, classes, scaler, folds, a calibration's
//     strata) and draws the feature map once from the seed. The plan and
//     the map's spec (features.Encode) travel to the workers in the
//     combiners' serialised configuration: workers decode the map and
//     never sample.
//   - With a data-dependent map (FitOptions.SampleMap: a Nyström map),
//     instead of drawing it, the driver replays the reservoir of
//     kernelkit fit --stream (nystrom.Reservoir, whose draws depend on
//     the row count alone), a pipeline fetches the rows it drew, and the
//     driver builds the map on them, standardised by the plan's scaler.
//   - Pass 2 reads the files again; each batch is prepared by the plan
//     (model.Plan.Prepare: scaled, one-hot, weighed, given its folds —
//     row i of the files' concatenation in name order in fold i mod k, or
//     for a calibration in its stratified fold, placed by the class counts
//     of the files before it and of the rows before it in its file) and
//     its statistics added by model.Plan.AddStats, in a CombineFn whose
//     MergeAccumulators adds statistics. Optionally (RunOptions.Fanout) the
//     merge is a tree: batches are spread over F keys, combined per key,
//     and the F partial statistics merged at the end.
//   - The driver selects λ by GCV or k-fold from the statistics and solves
//     (Solve, as model.Fit does), giving the usual model file.
//   - With Calibrate, pass 3 scores each row by the model of the folds
//     other than its own (model.FoldModels, model.Plan.Score), and the
//     driver fits the Platt sigmoids on the scores in row order
//     (model.Plan.Calibrate): kernelkit-beam fit --calibrate.
//
// With the same rows, options and seed the model equals model.Fit's and
// model.FitStream's up to the rounding of sums added in another order.
// Two orders of a sum of n terms differ by at most 2γ_n·Σ|terms|,
// γ_n = n·u/(1 − n·u), u = 2⁻⁵³; through the scaler, the features and
// the solve W = A⁻¹B (A = Z_cᵀZ_c + λI) the weights differ by at most
// √(D·K)·κ₂(A)(εA + εB)/(1 − κ₂(A)εA) relative in the max norm, εA and εB
// the relative perturbations of A and B this gives (see the test file
// bound_test.go for each term). The acceptance tests (8 shards of 4000
// letter rows, D = 256) evaluate the bound — 1.3·10⁻³ at κ₂(A) = 1.2·10³ —
// and measure 7·10⁻¹⁴ to 3·10⁻¹³, with every predicted class the same;
// calibrated probabilities differ by 6·10⁻¹⁴.
//
// Rows may carry a weight (FitOptions.Weight, a column of CSV or Parquet
// files) and several targets (FitOptions.Targets, a multi-output
// regression); both reach model.Census and model.Plan.Prepare as
// data.Batch.Weights and Targets, as in model.Fit. A calibration's
// stratified folds then count, before each batch, the rows of positive
// weight of each class and the rows of weight zero.
//
// Bad rows: a line that does not parse is found with data's own message
// for that file (file name, line, column). Without a dead-letter file the
// fit fails with the first bad row in (file, line) order and their count;
// with one, bad rows are written there (file,line,error,text) and counted,
// and the fit goes on without them. No row is dropped silently: the second
// pass checks that it read the rows and bad rows the first pass counted.
// A Parquet file has no bad rows: a value kernelkit does not read (a null,
// a NaN) fails the fit with the file, row group, column and row.
//
// # Prediction
//
// Predict reads each file in order with the model (its bytes in the DoFn's
// configuration) and writes OutDir/<file base name>.pred.csv with the
// columns file,line,prediction[,score…]: predictions keyed by file and
// line, one output file per input file, each written atomically.
//
// # Cost
//
// One worker's second pass costs about D² multiply-adds per row (the
// rank-n update of ZᵀZ; the map itself costs d·D), so its rows per second
// fall as 1/D²; an accumulator holds D² floats (8·D² bytes in memory; its
// encoding sends the upper triangle, 4·D(D+1) bytes). With B partial
// accumulators (at least one per bundle: about one per file, or per input
// split), a global combine sends B·4D² bytes to one worker, which merges
// them one after another; a tree of F keys merges B/F at each of F workers,
// then F at the last, so the merge's wall time falls from B·t to
// (B/F + F)·t, t the time to receive, decode and add one accumulator,
// least at F = √B. The merge is the bottleneck when B·t exceeds the
// compute time N·D²/(P·r) of P workers: as both scale with D², when B
// exceeds roughly N·(bandwidth in bytes/s)/(4·P·flop rate): tens of
// thousands of bundles for a billion rows on a thousand cores. The
// benchmarks BenchmarkAddInput and BenchmarkMerge measure r and t.
package kkbeam
