// Package train trains kernelkit's sequence classifiers (arch.ModelConfig)
// and reports the replications of the SKI-TNN and SNNK papers' training
// results.
//
// Engines (package train/engine): the native CPU engine (package native,
// the default) or the GoMLX graph engine (package train/graphtrain: the
// graph models of package nn on a GoMLX backend), which a program links
// in by importing train/graphtrain; this package itself imports no GoMLX
// package. Both write one checkpoint format and resume each other's
// checkpoints.
//
// Optimisation: AdamW (GoMLX's Adam with decoupled weight decay, applied to
// every trainable variable; the native engine reproduces it) at the
// learning rate
//
//	lr(s) = lr·(s+1)/w                              s < w (warm-up)
//	lr(s) = lr·½(1 + cos(π·(s − w)/(S − w)))        w ≤ s < S (cosine)
//
// for step s of S with w warm-up steps (ScheduleAt), the shape of
// the TNN authors' LRA configuration (1000 warm-up steps, cosine decay),
// softmax cross-entropy, mini-batches from an epoch-wise seeded shuffle.
//
// Reproducibility: the seed fixes the initialisation, the random features
// (FAVOR+ and HRF projections, redrawn every Redraw steps from the seed and
// the redraw count; SNNK towers) and the batch order; the native engine's
// reductions are fixed by the shapes and the graph engine's backend
// executes the ops of a graph one after another (nn.DefaultBackend), so
// the same seed gives the same losses and weights bit for bit.
//
// Checkpoints hold every variable (weights, random features, Adam moments,
// step counters, generator state) with the model configuration and seed;
// a run given an existing checkpoint resumes at its step and replays the
// same batch order, so stopping and resuming gives the run that did not
// stop (tested bit for bit). Fine-tuning (InitFrom) takes the embeddings
// and blocks of a pre-trained checkpoint; with FreezeBackbone only the
// adapters and the classifier train.
//
// ReadCheckpoint refuses a checkpoint with a NaN or an infinity in any
// variable, or without a variable its model needs (every parameter and
// random-feature variable of arch.ModelConfig.Variables, float32 of the
// model's dimensions), naming the variable; resuming training further
// needs the generator state, the step counters (equal to the checkpoint's
// step) and AdamW's moments of every trainable variable. Nothing is drawn
// afresh in place of a missing variable.
//
// Memory budget: New and Job.Run estimate the memory of a run — the
// parameters with their gradients and AdamW moments (16 bytes each, 40
// more while a checkpoint is written or read), the activations of a
// training step (arch.ModelConfig.EstimateMemory) and, for a Job, the data
// to generate or read — and refuse a run above Config.MaxMemory
// (DefaultMaxMemory, 8 GiB) with an error stating the memory it would
// need, before any data is generated or read and before the model is
// built.
//
// Data: Job generates a task (package tasks: ListOps, associative recall)
// or reads LRA TSV files, trains, evaluates and reports (JobReport).
package train
