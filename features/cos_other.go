//go:build !amd64

package features

// haveCosKernel reports whether cosKernel and cos32Kernel are available;
// only amd64 has them.
const haveCosKernel = false

func cosKernel(out, a, b []float64, c float64) int             { return 0 }
func cos32Kernel(out []float32, a, b []float64, c float64) int { return 0 }
