package device

import (
	"os"
	"strings"
	"testing"
)

// testDevices returns the devices a test runs its graphs on: always the
// pure-Go backend in float64 and float32, and the GPU ("cuda", float32)
// when this test binary was built with -tags xla and one is present —
// otherwise the GPU case is skipped with a message (scripts/gpu.sh runs
// these tests on the GPU machine). KERNELKIT_TEST_DEVICE names another
// device to add (a GoMLX backend configuration such as xla:cpu).
// KERNELKIT_REQUIRE_DEVICE names a device that must open (scripts/gpu_run.sh
// sets it to cuda where it found the plugin): then a failure to open it
// fails the test instead of skipping its cases, so a broken GPU setup
// cannot pass as "not tested here".
func testDevices(t *testing.T) []*Device {
	t.Helper()
	g, err := Open(Go)
	if err != nil {
		t.Fatalf("Open(go): %v", err)
	}
	devs := []*Device{g, g.WithFloat32()}
	names := []string{CUDA}
	if extra := os.Getenv("KERNELKIT_TEST_DEVICE"); extra != "" && extra != CUDA {
		names = append(names, extra)
	}
	for _, name := range names {
		d, err := Open(name)
		if err != nil {
			if os.Getenv("KERNELKIT_REQUIRE_DEVICE") == name {
				t.Fatalf("device %s is required (KERNELKIT_REQUIRE_DEVICE) but does not open: %v", name, err)
			}
			t.Logf("device %s not tested here: %v", name, err)
			continue
		}
		devs = append(devs, d)
	}
	return devs
}

// tolerance returns the relative tolerance of a comparison with the CPU
// path on d. Float64 graphs agree to rounding (f64, the caller's bound).
// Float32 graphs on the pure-Go backend round every operation to single
// precision: a sum of n terms is off by about 2⁻²⁴·√n of its scale
// (random rounding errors; n ≤ 4096 in these tests gives 4·10⁻⁶), and the
// errors measured are about 10⁻⁶, so 10⁻⁵ holds with margin. Float32
// graphs on XLA (a GPU, whose matrix products may run in TF32 with a
// 10-bit mantissa: 2⁻¹¹ ≈ 5·10⁻⁴ per product) keep 2·10⁻³.
func tolerance(d *Device, f64 float64) float64 {
	switch {
	case !d.Float32():
		return f64
	case d.name == CUDA || strings.HasPrefix(d.config, "xla"):
		return 2e-3
	default:
		return 1e-5
	}
}

// benchDevices returns the devices of the benchmarks: the pure-Go backend
// in float32, then CUDA and KERNELKIT_TEST_DEVICE where they open, in
// float32 when f32 is set, else in their own float type.
func benchDevices(b *testing.B, f32 bool) []*Device {
	g, err := Open(Go)
	if err != nil {
		b.Fatal(err)
	}
	devs := []*Device{g.WithFloat32()}
	names := []string{CUDA}
	if extra := os.Getenv("KERNELKIT_TEST_DEVICE"); extra != "" && extra != CUDA {
		names = append(names, extra)
	}
	for _, name := range names {
		d, err := Open(name)
		if err != nil {
			b.Logf("device %s not benchmarked here: %v", name, err)
			continue
		}
		if f32 {
			d = d.WithFloat32()
		}
		devs = append(devs, d)
	}
	return devs
}
