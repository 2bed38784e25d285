//go:build unix

package native

import "syscall"

// processCPU returns the user and system CPU time of the process so far,
// in nanoseconds (0 if unavailable): benchmarks report it per operation,
// a figure less sensitive than wall time to other processes sharing the
// cores.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
