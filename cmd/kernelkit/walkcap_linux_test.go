package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// capAddressSpace limits the process's address space to what it maps now
// plus extra bytes, so that a run of the flag walk that allocates far
// beyond its budget stops with Go's "out of memory" in this test process
// instead of exhausting the machine; restore lifts the cap. It is a no-op
// (restore does nothing) where the limit cannot be read or set.
func capAddressSpace(extra uint64) (restore func()) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		return func() {}
	}
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return func() {}
	}
	var vm uint64
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmSize:" && f[2] == "kB" {
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				vm = kb << 10
			}
		}
	}
	if vm == 0 || old.Cur < vm+extra {
		return func() {}
	}
	lim := syscall.Rlimit{Cur: vm + extra, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return func() {}
	}
	return func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &old); err != nil {
			panic(err) // raising the soft limit back to the hard limit cannot fail
		}
	}
}
