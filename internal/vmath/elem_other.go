//go:build !amd64

package vmath

func mulTo32Kernel(dst, a, b []float32) int                                      { return 0 }
func addTo32Kernel(dst, a, b []float32) int                                      { return 0 }
func scaleTo32Kernel(dst, a []float32, s float32) int                            { return 0 }
func scaleSubTo32Kernel(dst, g []float32, r float32, x []float32, c float32) int { return 0 }
func siluGradMulTo32Kernel(dst, dy, x, s []float32) int                          { return 0 }
func cmul32Kernel(dst, a, k []float32, conj, add bool) int                       { return 0 }

func dot32Kernel(a, b []float32, s *[8]float32) int { return 0 }
func sum32Kernel(x []float32, s *[8]float32) int    { return 0 }

func addConst32Kernel(dst, a []float32, c float32) int              { return 0 }
func subMulTo32Kernel(dst, a []float32, c float32, p []float32) int { return 0 }
