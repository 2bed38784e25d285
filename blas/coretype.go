package blas

import (
	"os"

	"golang.org/x/sys/cpu"
)

// coreTypeEnv is OpenBLAS's environment variable that names the kernels a
// DYNAMIC_ARCH build uses instead of the ones its CPU detection picks. The
// library reads it once, while it is loaded.
const coreTypeEnv = "OPENBLAS_CORETYPE"

// hasAVX512 reports whether the CPU and the operating system support the
// AVX-512 subsets that OpenBLAS's SkylakeX kernels execute (F, CD, BW, DQ
// and VL; package cpu checks that the OS saves the registers).
func hasAVX512() bool {
	x := cpu.X86
	return x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL
}

// preferAVX512 sets OPENBLAS_CORETYPE=SkylakeX for the load of OpenBLAS
// when the CPU has AVX-512 and the variable is unset, and returns the
// function that unsets it again (so that the process's environment is
// unchanged after the load) and reports whether that failed. A variable
// set by the user is left alone.
//
// OpenBLAS 0.3.21 (Debian 12) takes AMD Zen 4 and Zen 5 for Zen (its
// Haswell AVX2 kernels); later releases pick the AVX-512 kernels on those
// CPUs themselves, and on Intel's AVX-512 parts all of them do. On the
// 2-core AVX-512 EPYC of the 2026-12-05 measurements the SkylakeX kernels
// made the float32 training step of BenchmarkFDTNNStep (package native)
// 1.3 times faster (0.38 s against 0.48–0.62 s, alternated runs).
func preferAVX512() (restore func() error) {
	none := func() error { return nil }
	if _, set := os.LookupEnv(coreTypeEnv); set || !hasAVX512() {
		return none
	}
	if os.Setenv(coreTypeEnv, "SkylakeX") != nil {
		return none // the library chooses its kernels itself
	}
	return func() error { return os.Unsetenv(coreTypeEnv) }
}
