package train_test

import (
	"fmt"

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
