//go:build !amd64

package vmath

const haveAVX2 = false

func expKernel(dst, src []float64) int { return 0 }

// HasAVX2 reports whether the AVX2 kernels run: never on this architecture.
func HasAVX2() bool { return false }

func sigmoid32Kernel(dst, src []float32) int { return 0 }

func silu32Kernel(out, sig, x, c []float32) int { return 0 }

func exp32Kernel(dst, src []float32) int { return 0 }

func gelu32Kernel(y, dy, x []float32) int { return 0 }

func transpose8x8(dst []float32, ldd int, src []float32, lds int, s float32) bool { return false }

func add32Kernel(dst, src []float32) int     { return 0 }
func mulAdd32Kernel(dst, a, b []float32) int { return 0 }
