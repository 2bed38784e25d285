//go:build unix

package attention

import (
	"syscall"
	"time"
)

// cpuTime returns the user plus system CPU time of the process, which,
// unlike wall time, a busy machine does not inflate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
