package train_test

import (
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// ExampleScheduleAt prints the learning rate of a run of 10 steps with 2
// warm-up steps and peak 1e-3.
func ExampleScheduleAt() {
	for s := 0; s < 10; s++ {
		fmt.Printf("%.2e ", train.ScheduleAt(s, 1e-3, 2, 10))
	}
	fmt.Println()
	// Output:
	// 5.00e-04 1.00e-03 1.00e-03 9.62e-04 8.54e-04 6.91e-04 5.00e-04 3.09e-04 1.46e-04 3.81e-05
}

// ExampleJob trains a small FD-TNN on generated ListOps data with the native
// CPU engine (the default backend) for a few steps and evaluates it on a
// held-out test set: what "kernelkit train --task listops --model fd-tnn"
// runs. The accuracy of such a short run depends on the BLAS's rounding and
// is not printed; the sizes and the data are fixed by the seeds.
func ExampleJob() {
	job := &train.Job{
		Config: train.Config{
			Model: arch.ModelConfig{Kind: arch.KindFDTNN, Vocab: tasks.VocabSize, Classes: tasks.Classes,
				Length: 16, Width: 16, Depth: 1, Hidden: 16, RPEHidden: 8},
			Steps: 8, Batch: 16, LR: 3e-3, WeightDecay: 0.01, Warmup: 2, Seed: 1,
		},
		Task:   "listops",
		NTrain: 64, NEval: 16, NTest: 32,
	}
	rep, err := job.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	res := rep.Result
	fmt.Printf("%s %s: %d steps of batch %d on %d rows, %d trainable parameters, tested on %d rows\n",
		rep.Task, rep.Kind, res.Steps, rep.Batch, rep.NTrain, res.TrainableParams, rep.NTest)
	// rep.TestAcc and rep.TestLoss hold the test accuracy and loss.
	fmt.Printf("majority class (the prior a model must beat): %.3f of the %s rows\n", rep.Majority, rep.MajorityOf)
	// Output:
	// listops fd-tnn: 8 steps of batch 16 on 64 rows, 2842 trainable parameters, tested on 32 rows
	// majority class (the prior a model must beat): 0.156 of the train rows
}

// ExampleSummarize summarises runs over seeds, as the replication tables
// do (scripts/train_table.go): one replicate per model, best mean first.
func ExampleSummarize() {
	res := &train.Result{} // reports of training runs carry their result
	reports := []train.JobReport{
		{Kind: "tnn", Length: 512, Width: 64, Depth: 4, TestAcc: 0.30, Majority: 0.16, Result: res},
		{Kind: "tnn", Length: 512, Width: 64, Depth: 4, TestAcc: 0.34, Majority: 0.16, Result: res},
		{Kind: "fd-tnn", Length: 512, Width: 64, Depth: 4, TestAcc: 0.38, Majority: 0.16, Result: res},
	}
	for _, r := range train.Summarize(reports) {
		fmt.Printf("%s: %d runs, mean %.2f, sd %.3f\n", r.Name(), len(r.TestAcc), r.Mean, r.SD)
	}
	// Output:
	// fd-tnn: 1 runs, mean 0.38, sd 0.000
	// tnn: 2 runs, mean 0.32, sd 0.028
}
