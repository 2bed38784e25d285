package analog_test

import (
	"fmt"

	"github.com/kernelkit/kernelkit/analog"
)

// The cost of projecting 1024 inputs of dimension 512 onto 1024 features
// (Supplementary Table VIII).
func ExampleProjectionCost() {
	for _, dev := range []analog.Hardware{analog.AIMC, analog.GPUINT8, analog.CPU} {
		c, _ := analog.ProjectionCost(dev, 1024, 512, 1024)
		fmt.Printf("%-18s %.4f ms %.4f mJ\n", c.Hardware, c.LatencyMS, c.EnergyMJ)
	}
	// Output:
	// AIMC (IBM HERMES)  0.0170 ms 0.1100 mJ
	// GPU INT8 (A100)    0.0017 ms 0.6883 mJ
	// CPU (i9-14900KF)   0.8738 ms 221.0748 mJ
}
