//go:build !amd64

package vmath

const haveAVX2 = false

func expKernel(dst, src []float64) int { return 0 }
