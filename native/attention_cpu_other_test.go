//go:build !unix

package native

// processCPU returns 0: the process CPU time is read on Unix systems only.
func processCPU() int64 { return 0 }
